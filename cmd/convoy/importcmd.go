package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/convoy-sh/convoy/internal/importer/helmfile"
	"github.com/spf13/cobra"
)

func newImportCmd(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Convert another tool's configuration into a stack",
	}
	var out string
	hf := &cobra.Command{
		Use:   "helmfile FILE",
		Short: "Convert a helmfile.yaml into a stack directory",
		Long: `Import helmfile writes a stack (stack.hcl, and the values files the helmfile
reads) from a helmfile.yaml or helmfile.yaml.gotmpl: repositories, releases
(values, set, secrets as sops_file, needs as depends_on, installed as count,
labels, patches, helmDefaults) and environments (their values as variables).
bases and ---separated parts are merged as helmfile merges them. Go
templates are translated where they can be ({{ .Environment.Name }},
{{ .Values.x }}, {{ requiredEnv "X" }}, quote, default, printf, ...; a
.gotmpl values file becomes an HCL template read with templatefile); the
rest is kept as comments (LEFT BY HAND) where it stood. Everything left by
hand is printed, one warning per item, and listed at the head of stack.hcl.
Check the result with convoy validate.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("-o DIR is required")
			}
			res, err := helmfile.Convert(args[0])
			if err != nil {
				return err
			}
			if err := res.Write(out); err != nil {
				return err
			}
			for _, w := range res.LeftByHand {
				fmt.Fprintf(s.Err, "Warning: %s\n", w)
			}
			fmt.Fprintf(s.Out, "Wrote %s (%d files). Check it with: convoy validate -C %s\n", filepath.Join(out, "stack.hcl"), len(res.Files), out)
			if n := len(res.LeftByHand); n > 0 {
				fmt.Fprintf(s.Out, "%d left by hand: listed at the head of stack.hcl, each kept as a comment where it stood.\n", n)
			}
			return nil
		},
	}
	hf.Flags().StringVarP(&out, "out", "o", "", "the stack directory to write (created if missing)")
	cmd.AddCommand(hf)
	return cmd
}
