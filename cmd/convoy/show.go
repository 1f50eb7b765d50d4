package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/spf13/cobra"
)

type showOptions struct {
	JSON     bool
	Markdown bool
	View     planViewFlags
}

func newShowCmd(s streams) *cobra.Command {
	var o showOptions
	cmd := &cobra.Command{
		Use:   "show PLAN_FILE",
		Short: "Print a plan saved with convoy plan --out",
		Long: `Show prints a saved plan as convoy plan printed it (text, --json or
--markdown), sensitive values masked, after what it was made from: the stack
directory, the names of the variables given and the targets. It reads only
the file.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completePlanFiles,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), s, args[0])
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the plan as JSON (docs/plan-json.md)")
	cmd.Flags().BoolVar(&o.Markdown, "markdown", false, "print a summary for a pull-request comment")
	addPlanViewFlags(cmd.Flags(), &o.View)
	return cmd
}

func (o showOptions) Run(_ context.Context, s streams, path string) error {
	if o.JSON && o.Markdown {
		return errors.New("--json and --markdown exclude each other")
	}
	f, err := run.ReadPlanFile(path)
	if err != nil {
		return err
	}
	switch {
	case o.JSON:
		return view.JSON(s.Out, f.Plan)
	case o.Markdown:
		return view.Markdown(s.Out, f.Plan)
	}
	p := f.Plan
	fmt.Fprintf(s.Out, "Saved plan of stack %q, made %s", p.Stack, p.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	if o := f.Origin; o != nil {
		fmt.Fprintf(s.Out, " in %s", o.Dir)
		vars := givenVariables(o.Variables)
		if len(vars) > 0 {
			fmt.Fprintf(s.Out, "\nwith %s", strings.Join(vars, ", "))
		}
	}
	if len(p.Targets) > 0 {
		targets := make([]string, len(p.Targets))
		for i, t := range p.Targets {
			targets[i] = t.String()
		}
		fmt.Fprintf(s.Out, "\ntargets: %s", strings.Join(targets, ", "))
		if p.IncludeDeps {
			fmt.Fprint(s.Out, " and their dependencies")
		}
	}
	fmt.Fprint(s.Out, ".\n\n")
	return o.View.text(s.Out, p)
}

// givenVariables names the variable values a plan was made with, sorted:
// "--var NAME" (once a name), "--var-file FILE", "CONVOY_VAR_NAME" and
// "var.NAME from WHERE" for the controller's values.
func givenVariables(vals config.RawValues) []string {
	var out []string
	vars := map[string]bool{}
	for _, v := range vals {
		switch v.Source {
		case config.ValueFromCLIArg:
			if !vars[v.Name] {
				vars[v.Name] = true
				out = append(out, "--var "+v.Name)
			}
		case config.ValueFromNamedFile:
			out = append(out, "--var-file "+v.Where)
		case config.ValueFromEnvVar:
			out = append(out, v.Where)
		default:
			if v.IsFile() {
				out = append(out, v.Where)
				continue
			}
			out = append(out, fmt.Sprintf("var.%s from %s", v.Name, v.Where))
		}
	}
	slices.Sort(out)
	return out
}
