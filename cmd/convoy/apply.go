package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/convoy-sh/convoy/internal/apply"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/resolve"
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// stackLabel marks release records with the stack that owns them, so apply
// can find releases removed from the stack files.
const stackLabel = "convoy.dev/stack"

type applyOptions struct {
	Stack       stackFlags
	Cluster     clusterFlags
	AutoApprove bool
	Parallelism int
	Atomic      bool
	NoProgress  bool
	PlanFile    string
}

func newApplyCmd(s streams) *cobra.Command {
	var o applyOptions
	cmd := &cobra.Command{
		Use:   "apply [PLAN_FILE]",
		Short: "Install or upgrade every release of the stack in dependency order",
		Long: `Apply computes and shows the plan (or takes a plan saved with convoy plan
--out, refusing it if anything it observed has changed since), asks for
confirmation on a terminal, and applies it: every release of the stack is
installed or upgraded (unchanged ones are left alone), in
dependency order and in parallel where the graph allows, with Helm's hooks,
waits and atomic rollback. A release whose dependency failed is skipped;
independent releases go on. Releases this stack deployed earlier that are no
longer in its files are uninstalled when everything else succeeded. With
--atomic (or atomic = true in the stack block) a failure rolls back every
release this run changed. One apply per stack runs at a time.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.PlanFile = args[0]
			}
			return o.Run(cmd.Context(), s)
		},
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	addClusterFlags(cmd.Flags(), &o.Cluster)
	addRunFlags(cmd.Flags(), &o.Parallelism, &o.NoProgress)
	cmd.Flags().BoolVar(&o.AutoApprove, "auto-approve", false, "apply without asking for confirmation (required when not on a terminal)")
	addForceConflictsFlag(cmd.Flags())
	cmd.Flags().BoolVar(&o.Atomic, "atomic", false, "if any release fails, roll back every release changed in this run")
	return cmd
}

// addForceConflictsFlag keeps --force-conflicts accepted, with a warning:
// apply always takes over the fields the stack's objects set.
func addForceConflictsFlag(fs *pflag.FlagSet) {
	fs.Bool("force-conflicts", false, "")
	_ = fs.MarkDeprecated("force-conflicts", "apply always takes over the fields the stack's objects set; ignore_changes leaves fields to others")
}

func addRunFlags(fs *pflag.FlagSet, parallelism *int, noProgress *bool) {
	fs.IntVarP(parallelism, "parallelism", "p", 5, "how many releases may be applied at once")
	fs.BoolVar(noProgress, "no-progress", false, "plain timestamped log lines instead of the live view on a terminal")
}

// isTerminal reports whether r (or w) is an interactive terminal.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// confirm asks on a terminal; refuses without one unless auto-approved.
func confirm(s streams, autoApprove bool, question string) error {
	if autoApprove {
		return nil
	}
	if !isTerminal(s.In) {
		return errors.New("not running on a terminal: pass --auto-approve to proceed without confirmation")
	}
	fmt.Fprintf(s.Err, "%s Only 'yes' will be accepted: ", question)
	var answer string
	_, _ = fmt.Fscanln(s.In, &answer)
	if answer != "yes" {
		return errors.New("cancelled")
	}
	return nil
}

// forwarder hands engine events to the progress view, which exists only
// once the run's steps are known.
type forwarder struct {
	mu sync.Mutex
	to apply.Progress
}

func (f *forwarder) event(ev release.Event) {
	f.mu.Lock()
	p := f.to
	f.mu.Unlock()
	if p != nil {
		p.Event(ev)
	}
}

func (f *forwarder) set(p apply.Progress) {
	f.mu.Lock()
	f.to = p
	f.mu.Unlock()
}

func newProgress(s streams, noProgress bool, steps []*apply.Step) apply.Progress {
	rows := make([]apply.Row, len(steps))
	for i, st := range steps {
		rows[i] = apply.Row{ID: st.ID, Namespace: st.Namespace, Name: st.Name}
	}
	if !noProgress && isTerminal(s.Err) && os.Getenv("TERM") != "dumb" {
		return apply.NewLive(s.Err, rows)
	}
	return apply.NewLines(s.Err, rows)
}

func (o applyOptions) Run(ctx context.Context, s streams) error {
	if o.Parallelism < 1 {
		return errors.New("--parallelism must be at least 1")
	}
	st, order, hash, err := loadForPlan(ctx, o.Stack, s)
	if err != nil {
		return err
	}
	fwd := &forwarder{}
	engines := newEngines(o.Cluster, fwd.event)
	unlock, err := lockStack(ctx, st, engines, "convoy apply")
	if err != nil {
		return err
	}
	defer unlock()
	p, err := o.plan(ctx, s, st, order, hash, engines)
	if err != nil || p == nil {
		return err
	}
	steps, err := o.steps(ctx, st, p, engines)
	if err != nil {
		return err
	}
	progress := newProgress(s, o.NoProgress, steps)
	fwd.set(progress)
	results := apply.Execute(ctx, steps, apply.ExecOptions{Parallelism: o.Parallelism, Atomic: o.Atomic || st.Atomic, Progress: progress})
	progress.Close()
	fwd.set(nil)
	writeResults(s.Out, results, p)
	for _, r := range results {
		if r.Status != apply.Succeeded {
			return errSilent
		}
	}
	return nil
}

// plan is the plan to apply: the saved one, verified against what the
// cluster and the stack files hold now, or a fresh one the user confirms.
// It returns nil when there is nothing to do.
func (o applyOptions) plan(ctx context.Context, s streams, st *config.Stack, order []config.ReleaseInstanceAddr, hash string, engines *engines) (*plan.Plan, error) {
	if o.PlanFile != "" {
		p, err := plan.ReadFile(o.PlanFile)
		if err != nil {
			return nil, err
		}
		if p.Stack != st.Name {
			return nil, fmt.Errorf("the plan in %s is for stack %q, not %q", o.PlanFile, p.Stack, st.Name)
		}
		if err := p.VerifyConfig(hash); err != nil {
			return nil, err
		}
		if err := p.Verify(ctx, engines.byName(ctx, st)); err != nil {
			return nil, err
		}
		return p, nil
	}
	p, err := plan.Compute(ctx, plan.Input{
		Stack:       st,
		Order:       order,
		Engine:      engines.forCluster,
		Charts:      newCharts(),
		Parallelism: o.Parallelism,
		ConfigHash:  hash,
	})
	if err != nil {
		return nil, err
	}
	if err := plan.RenderText(s.Out, p); err != nil {
		return nil, err
	}
	if !p.HasChanges() {
		return nil, nil
	}
	if err := confirm(s, o.AutoApprove, "Apply this plan?"); err != nil {
		return nil, err
	}
	return p, nil
}

// lockStack takes the stack's lock on every cluster it uses, or none.
func lockStack(ctx context.Context, st *config.Stack, engines *engines, command string) (func(), error) {
	clusters := plan.Clusters(st)
	var held []*apply.Lock
	unlock := func() {
		for _, l := range held {
			_ = l.Release(context.WithoutCancel(ctx))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(clusters)) {
		eng, err := engines.forCluster(ctx, clusters[key])
		if err != nil {
			unlock()
			return nil, err
		}
		l, err := apply.Acquire(ctx, eng.Client(), st.Name, command)
		if err != nil {
			unlock()
			return nil, err
		}
		held = append(held, l)
	}
	return unlock, nil
}

// steps turns the plan into the run: a step per release in the plan's
// order. Deploys execute the plan's rendered output (releases whose values
// were known only after apply are rendered when their dependencies are
// done); uninstalls of removed releases wait for every deploy.
func (o applyOptions) steps(ctx context.Context, st *config.Stack, p *plan.Plan, engines *engines) ([]*apply.Step, error) {
	charts := newCharts()
	engineFor := engines.byName(ctx, st)
	var steps []*apply.Step
	var deployIDs []string
	for _, rc := range p.Releases {
		eng, err := engineFor(rc.Cluster)
		if err != nil {
			return nil, err
		}
		step := &apply.Step{
			ID: rc.Addr, Name: rc.Name, Namespace: rc.Namespace, DependsOn: rc.DependsOn, Engine: eng,
			CheckRevision: true, ExpectRevision: rc.Observed.LastRevision,
		}
		switch rc.Action {
		case plan.ActionNoOp:
			step.Kind = apply.StepNoOp
		case plan.ActionUninstall:
			step.Kind = apply.StepUninstall
			step.DependsOn = deployIDs
			step.Uninstall = release.UninstallRequest{Name: rc.Name, Namespace: rc.Namespace, Wait: true}
		default:
			step.Kind = apply.StepDeploy
			deployIDs = append(deployIDs, rc.Addr)
			if rc.KnownAfterApply || rc.Saved == nil {
				prepare, err := o.renderAtApply(st, rc.Addr, eng, engines, charts)
				if err != nil {
					return nil, err
				}
				step.Prepare = prepare
			} else {
				saved := rc.Saved
				step.Prepare = func(ctx context.Context, _ map[string]*release.Release) (*release.Prepared, error) {
					req := saved.Request
					return eng.PrepareRendered(ctx, &req, saved.Rendered)
				}
			}
		}
		steps = append(steps, step)
	}
	return steps, nil
}

// renderAtApply renders a release when its step starts, with its
// dependencies' outputs.
func (o applyOptions) renderAtApply(st *config.Stack, addrText string, eng *release.Engine, engines *engines, charts *resolve.Charts) (func(context.Context, map[string]*release.Release) (*release.Prepared, error), error) {
	addr, diags := config.ParseReleaseInstanceAddr(addrText)
	if diags.HasErrors() {
		return nil, errors.New(diags.Error())
	}
	inst := st.Release(addr)
	if inst == nil {
		return nil, fmt.Errorf("the plan has %s, which the stack does not define", addrText)
	}
	return func(ctx context.Context, applied map[string]*release.Release) (*release.Prepared, error) {
		cur := inst
		if !inst.Known {
			av, err := appliedAttributes(ctx, st, inst, applied, engines)
			if err != nil {
				return nil, err
			}
			again, diags := st.EvaluateRelease(addr, av)
			if diags.HasErrors() {
				return nil, errors.New(diags.Error())
			}
			cur = again
		}
		r, err := resolve.Resolve(charts, st.Dir, cur)
		if err != nil {
			return nil, err
		}
		return eng.Prepare(ctx, plan.NewRequest(st, r))
	}, nil
}

// writeResults prints the final table: every release's outcome and time,
// then the errors in full.
func writeResults(w io.Writer, rs []*apply.Result, p *plan.Plan) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RELEASE\tNAMESPACE\tACTION\tREVISION\tRESULT\tDURATION")
	for _, r := range rs {
		action := "deploy"
		switch {
		case r.Step.Kind == apply.StepUninstall:
			action = "uninstall"
		case r.Step.Kind == apply.StepNoOp:
			action = "no-op"
		case r.Release != nil && r.Release.Version == 1:
			action = "install"
		case r.Release != nil:
			action = "upgrade"
		}
		rev, result := "-", string(r.Status)
		switch {
		case r.Status == apply.Skipped:
			result += " (" + r.Reason + ")"
		case r.Step.Kind == apply.StepNoOp:
			result = "unchanged"
		case r.Step.Kind == apply.StepUninstall && r.Status == apply.Succeeded:
			result = "uninstalled"
		case r.Release != nil && r.Step.Kind == apply.StepDeploy:
			rev, result = fmt.Sprint(r.Release.Version), string(r.Release.Info.Status)
		}
		if r.Restored {
			result += ", restored"
		} else if r.RestoreErr != nil {
			result += ", restore failed"
		}
		dur := "-"
		if r.Duration > 0 {
			dur = r.Duration.Round(10 * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Step.Name, r.Step.Namespace, action, rev, result, dur)
	}
	tw.Flush()
	redact := func(err error) string {
		if p != nil {
			err = p.RedactError(err)
		}
		return strings.TrimSpace(err.Error())
	}
	for _, r := range rs {
		if r.Err != nil {
			fmt.Fprintf(w, "\n%s (%s/%s): %s\n", r.ID, r.Step.Namespace, r.Step.Name, redact(r.Err))
		}
		if r.RestoreErr != nil {
			fmt.Fprintf(w, "\n%s: restoring failed: %s\n", r.ID, redact(r.RestoreErr))
		}
	}
}

// loadOrdered evaluates the stack and orders its releases; diagnostics are
// printed and end the command.
func loadOrdered(ctx context.Context, f stackFlags, s streams) (*config.Stack, []config.ReleaseInstanceAddr, error) {
	ls, diags := f.loadStack(ctx)
	var order []config.ReleaseInstanceAddr
	if ls.Stack != nil {
		g, d := ls.Stack.Graph()
		diags = append(diags, d...)
		if !d.HasErrors() {
			var d2 = diags[:0:0]
			order, d2 = g.TopologicalOrder()
			diags = append(diags, d2...)
		}
	}
	if diags.HasErrors() {
		var files = ls.configFiles()
		if err := writeDiagnostics(s.Err, diags, files); err != nil {
			return nil, nil, err
		}
		return nil, nil, errSilent
	}
	return ls.Stack, order, nil
}

func (ls loadedStack) configFiles() map[string]*hcl.File {
	if ls.Config == nil {
		return nil
	}
	return ls.Config.Files
}
