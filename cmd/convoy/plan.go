package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/spf13/cobra"
)

// planFormat is how the plan is printed.
type planFormat int

const (
	planText planFormat = iota
	planJSON
	planMarkdown
)

type planOptions struct {
	Stack            stackFlags
	Cluster          clusterFlags
	Out              string
	DetailedExitCode bool
	JSON             bool
	Markdown         bool
	Targets          []string
	IncludeDeps      bool
	Parallelism      int
}

func newPlanCmd(s streams) *cobra.Command {
	var o planOptions
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show what apply would change, against the stored revisions and the live cluster",
		Long: `Plan renders every release of the stack (with live lookups) and compares it
with its last deployed revision and, through server-side-apply dry runs, with
the live cluster: releases to install, upgrade or uninstall, field-level
changes per object, and drift (objects changed outside convoy). It changes
nothing. --out saves the plan for convoy apply, which refuses it once
anything it observed has changed.

With --detailed-exitcode the exit code is 0 when nothing would change, 1 on
error and 2 when there are changes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context(), s) },
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	addClusterFlags(cmd.Flags(), &o.Cluster)
	fs := cmd.Flags()
	fs.StringVar(&o.Out, "out", "", "save the plan to this file (mode 0600) for convoy apply")
	fs.BoolVar(&o.DetailedExitCode, "detailed-exitcode", false, "exit 0 when there are no changes, 1 on error, 2 when there are changes")
	fs.BoolVar(&o.JSON, "json", false, "print the plan as JSON (docs/plan-json.md)")
	fs.BoolVar(&o.Markdown, "markdown", false, "print a summary for a pull-request comment")
	fs.StringArrayVar(&o.Targets, "target", nil, "plan only this release (release.NAME or release.NAME[\"key\"]; repeatable)")
	fs.BoolVar(&o.IncludeDeps, "include-deps", false, "with --target, also plan the releases the targets depend on")
	fs.IntVar(&o.Parallelism, "parallelism", plan.DefaultParallelism, "how many renders, record reads and dry runs run at once")
	addForceConflictsFlag(fs)
	return cmd
}

func (o planOptions) format() (planFormat, error) {
	switch {
	case o.JSON && o.Markdown:
		return 0, errors.New("--json and --markdown exclude each other")
	case o.JSON:
		return planJSON, nil
	case o.Markdown:
		return planMarkdown, nil
	}
	return planText, nil
}

func (o planOptions) Run(ctx context.Context, s streams) error {
	format, err := o.format()
	if err != nil {
		return err
	}
	if o.Parallelism < 1 {
		return errors.New("--parallelism must be at least 1")
	}
	st, order, hash, err := loadForPlan(ctx, o.Stack, s)
	if err != nil {
		return err
	}
	targets, diags := st.ResolveTargets(o.Targets)
	if diags.HasErrors() {
		if err := writeDiagnostics(s.Err, diags, nil); err != nil {
			return err
		}
		return errSilent
	}
	engines := newEngines(o.Cluster, nil)
	if err := engines.connectAll(ctx, st); err != nil {
		return err
	}
	p, err := plan.Compute(ctx, plan.Input{
		Stack:       st,
		Order:       order,
		Engine:      engines.forCluster,
		Charts:      newCharts(),
		Targets:     targets,
		IncludeDeps: o.IncludeDeps,
		Parallelism: o.Parallelism,
		ConfigHash:  hash,
	})
	if err != nil {
		return err
	}
	switch format {
	case planJSON:
		err = plan.RenderJSON(s.Out, p)
	case planMarkdown:
		err = plan.RenderMarkdown(s.Out, p)
	default:
		err = plan.RenderText(s.Out, p)
	}
	if err != nil {
		return err
	}
	if o.Out != "" {
		if err := p.WriteFile(o.Out); err != nil {
			return err
		}
		note := ""
		if p.HasSensitive() {
			note = " It holds sensitive values unmasked (apply needs them): keep it as secret as they are."
		}
		fmt.Fprintf(s.Err, "Saved the plan to %s (mode 0600).%s Apply it with: convoy apply %s\n", o.Out, note, o.Out)
	}
	if o.DetailedExitCode && p.HasChanges() {
		return &exitError{code: 2}
	}
	return nil
}

// loadForPlan loads, evaluates and orders the stack and hashes its
// configuration; diagnostics are printed and end the command.
func loadForPlan(ctx context.Context, f stackFlags, s streams) (*config.Stack, []config.ReleaseInstanceAddr, string, error) {
	ls, diags := f.loadStack(ctx)
	var order []config.ReleaseInstanceAddr
	if ls.Stack != nil && !diags.HasErrors() {
		g, d := ls.Stack.Graph()
		diags = append(diags, d...)
		if !d.HasErrors() {
			order, d = g.TopologicalOrder()
			diags = append(diags, d...)
		}
	}
	if diags.HasErrors() {
		if err := writeDiagnostics(s.Err, diags, ls.configFiles()); err != nil {
			return nil, nil, "", err
		}
		return nil, nil, "", errSilent
	}
	opts, _ := f.evalOptions(os.Environ())
	hash, err := plan.ConfigHash(ls.Config, opts)
	if err != nil {
		return nil, nil, "", err
	}
	return ls.Stack, order, hash, nil
}

// byName adapts engines to plan.Verify's lookup by cluster name.
func (e *engines) byName(ctx context.Context, st *config.Stack) func(string) (*release.Engine, error) {
	return func(name string) (*release.Engine, error) {
		if name == "" {
			return e.forCluster(ctx, nil)
		}
		spec := st.Clusters[name]
		if spec == nil {
			return nil, fmt.Errorf("the plan names cluster %q, which the stack does not define", name)
		}
		return e.forCluster(ctx, spec)
	}
}
