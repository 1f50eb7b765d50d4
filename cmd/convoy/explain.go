package main

import (
	"context"
	"errors"
	"os"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/spf13/cobra"
)

type explainOptions struct {
	stackRun
	Refresh string
	// NoColor is read by execute for the diagnostics it prints; the
	// explanation itself is plain text.
	NoColor bool
}

func newExplainCmd(s streams) *cobra.Command {
	var o explainOptions
	cmd := &cobra.Command{
		Use:   "explain [-C DIR | PLAN_FILE] RELEASE [OBJECT [PATH]]",
		Short: "Show why fields of a release's objects change: the inputs that changed them, and where those were set",
		Long: `Explain prints, for the changed fields of one release (of one object:
OBJECT as Kind/name or the printed reference "apps/v1 Deployment ns/name";
of one field: PATH dotted as the plan prints it, spec.replicas, or a
prefix of such paths), the whole chain of what changed them: the values
leaf, chart or drift, where it is set (file:line:column, an environment
variable, a flag), what its expression read (variables, locals, release
outputs, and where each variable's value was given) and the layers it
overrode. Values are masked as in convoy plan.

With PLAN_FILE (a first argument naming a file: a plan saved with convoy
plan --out) it reads that plan; otherwise it plans RELEASE (with its
dependencies' outputs) from the stack -C names, with --var, --var-file and
--env as convoy plan takes them. It changes nothing.

Planning from the stack, the fields that do not change are traced too
("why is spec.replicas 5?"): the release is rendered again once per values
leaf whose value occurs in its rendered objects, with that leaf alone
perturbed, and each field names the leaves that change it (at most 128
leaves; a field computed from a value without printing it is missed). A
saved plan holds the changed fields' inputs only.`,
		Args: cobra.RangeArgs(1, 4),
		RunE: func(cmd *cobra.Command, args []string) error { return o.Run(cmd.Context(), s, args) },
	}
	addStackRunFlags(cmd.Flags(), &o.stackRun)
	addRefreshFlag(cmd.Flags(), &o.Refresh)
	addKubeVersionFlag(cmd.Flags(), &o.KubeVersion)
	cmd.Flags().BoolVar(&o.NoColor, "no-color", false, "print without colours (also: NO_COLOR set, or not a terminal)")
	return cmd
}

func (o explainOptions) Run(ctx context.Context, s streams, args []string) error {
	var p *plan.Plan
	if fi, err := os.Stat(args[0]); err == nil && fi.Mode().IsRegular() {
		if len(args) < 2 {
			return errors.New("explain PLAN_FILE needs the RELEASE to explain")
		}
		f, err := run.ReadPlanFile(args[0])
		if err != nil {
			return err
		}
		p, args = f.Plan, args[1:]
	} else {
		if len(args) > 3 {
			return errors.New("explain takes RELEASE [OBJECT [PATH]] after the options (and a PLAN_FILE first)")
		}
		refresh, err := run.ParseRefresh(o.Refresh)
		if err != nil {
			return err
		}
		opts, err := o.options(s)
		if err != nil {
			return err
		}
		session, err := run.Open(ctx, opts)
		if err != nil {
			return err
		}
		defer session.Close()
		res, err := session.Plan(ctx, run.PlanRequest{Targets: []string{args[0]}, Refresh: refresh, Observe: run.ObserveMetadata, Explain: true})
		var foreign *plan.ForeignError
		if err != nil && !errors.As(err, &foreign) {
			return err
		}
		p = res.Plan
	}
	q := view.ExplainQuery{Release: args[0]}
	if len(args) > 1 {
		q.Object = args[1]
	}
	if len(args) > 2 {
		q.Path = args[2]
	}
	return view.Explain(s.Out, p, q)
}
