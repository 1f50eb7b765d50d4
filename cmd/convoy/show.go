package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/controller/planstore"
	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/spf13/cobra"
)

type showOptions struct {
	JSON     bool
	Markdown bool
	View     planViewFlags
	// Stack (in Namespace) reads the plan the controller stored for a
	// Stack instead of a file.
	Stack, Namespace string
	// StackSet prints a StackSet's fleet plan.
	StackSet string
	kubeFlags
}

func newShowCmd(s streams) *cobra.Command {
	var o showOptions
	cmd := &cobra.Command{
		Use:   "show PLAN_FILE | --stack NAME | --stackset NAME [-n NAMESPACE]",
		Short: "Print a plan saved with convoy plan --out, or the one the controller stored for a Stack",
		Long: `Show prints a saved plan as convoy plan printed it (text, --json or
--markdown), sensitive values masked, after what it was made from: the stack
directory, the names of the variables given and the targets. It reads only
the file.

With --stack NAME it reads instead the plan convoy controller stored for
that Stack (its Secret convoy-plan-NAME, and the parts of a plan over
1 MiB), checked against the plan's digest, which it prints.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.Stack != "" || o.StackSet != "" {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		ValidArgsFunction: completePlanFiles,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.StackSet != "" {
				c, ns, err := o.connect(o.Namespace)
				if err != nil {
					return err
				}
				return showStackSet(cmd.Context(), s, c, ns, o.StackSet)
			}
			if o.Stack != "" {
				return o.RunStack(cmd.Context(), s)
			}
			return o.Run(cmd.Context(), s, args[0])
		},
	}
	cmd.Flags().StringVar(&o.Stack, "stack", "", "read the plan the controller stored for this Stack")
	cmd.Flags().StringVar(&o.StackSet, "stackset", "", "print this StackSet's fleet plan: its Stacks grouped by identical plan")
	cmd.Flags().StringVarP(&o.Namespace, "namespace", "n", "", "the Stack's namespace (default: the kubeconfig context's)")
	o.kubeFlags.add(cmd)
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
	return o.show(s, f)
}

// RunStack prints the plan stored for a Stack.
func (o showOptions) RunStack(ctx context.Context, s streams) error {
	if o.JSON && o.Markdown {
		return errors.New("--json and --markdown exclude each other")
	}
	c, ns, err := o.connect(o.Namespace)
	if err != nil {
		return err
	}
	b, digest, err := planstore.StoredPlan(ctx, c, ns, o.Stack)
	if err != nil {
		return err
	}
	f, err := run.DecodePlan(b, fmt.Sprintf("the plan of Stack %s/%s", ns, o.Stack))
	if err != nil {
		return err
	}
	if !o.JSON && !o.Markdown {
		fmt.Fprintf(s.Out, "Plan %s of Stack %s/%s (%d bytes stored).\n", digest, ns, o.Stack, len(b))
	}
	return o.show(s, f)
}

func (o showOptions) show(s streams, f *run.SavedPlan) error {
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
