package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/convoy-sh/convoy/internal/safefile"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/textdiff"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/spf13/cobra"
)

// exitFmtCheck is the exit code of `fmt --check` when a file would change.
const exitFmtCheck = 3

type fmtOptions struct {
	Dir   string
	Check bool
	Diff  bool
}

func newFmtCmd(s streams) *cobra.Command {
	var o fmtOptions
	cmd := &cobra.Command{
		Use:   "fmt",
		Short: "Rewrite a stack's HCL files in canonical format",
		Long: `Fmt rewrites every .hcl file of the stack directory (variable files
included) in canonical format and lists the files it changed.

With --check it changes nothing and exits 3 if any file is not formatted,
for CI. With --diff it prints what changes as a unified diff.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), s)
		},
	}
	addDirFlag(cmd.Flags(), &o.Dir)
	cmd.Flags().BoolVar(&o.Check, "check", false, "change nothing; exit 3 if a file is not formatted")
	cmd.Flags().BoolVar(&o.Diff, "diff", false, "print the changes as a unified diff")
	return cmd
}

func (o fmtOptions) Run(_ context.Context, s streams) error {
	entries, err := os.ReadDir(o.Dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".hcl") && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var diags hcl.Diagnostics
	files := map[string]*hcl.File{}
	changed := 0
	for _, name := range names {
		path := filepath.Join(o.Dir, name)
		// Regular files inside the stack directory only: fmt writes back
		// through symlinks.
		src, err := (safefile.Dir{Path: o.Dir, Desc: "the stack directory"}).Read(name, config.MaxFileSize)
		if err != nil {
			return err
		}
		// Formatting a file with syntax errors could make it worse: report
		// them and leave the file alone.
		f, d := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
		if d.HasErrors() {
			files[path] = f
			diags = append(diags, d...)
			continue
		}
		out := hclwrite.Format(src)
		if bytes.Equal(src, out) {
			continue
		}
		changed++
		fmt.Fprintln(s.Out, path)
		if o.Diff {
			fmt.Fprint(s.Out, textdiff.Unified(path, string(src), string(out)))
		}
		if !o.Check {
			st, err := os.Stat(path)
			if err != nil {
				return err
			}
			if err := os.WriteFile(path, out, st.Mode().Perm()); err != nil {
				return err
			}
		}
	}
	if len(diags) > 0 {
		if err := writeDiagnostics(s.Err, diags, files); err != nil {
			return err
		}
		return errSilent
	}
	if o.Check && changed > 0 {
		return &exitError{code: exitFmtCheck}
	}
	return nil
}
