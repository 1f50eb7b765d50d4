package run

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/convoy-sh/convoy/internal/apply"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/dag"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planfile"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/resolve"
)

// ApplyRequest says what to apply and how to involve the user.
type ApplyRequest struct {
	// PlanFile is a plan saved by `convoy plan --out`; "" computes a plan.
	PlanFile string
	// Plan selects what a computed plan covers (targets, destroy).
	Plan PlanRequest
	// Atomic restores every release changed in the run when one fails (the
	// stack's atomic attribute turns it on too).
	Atomic bool
	// KeepHistory keeps the records of uninstalled releases.
	KeepHistory bool
	// Command names the operation in the stack lock ("convoy apply").
	Command string
	// Review is shown a computed plan that has changes before anything
	// is applied; an error cancels the run. A saved plan was reviewed when
	// it was made.
	Review func(*plan.Plan) error
	// Progress returns the view of the run's steps (nil: none).
	Progress func([]apply.Row) apply.Progress
}

// Applied is what a run did: the plan it executed and each step's result
// (in the plan's order). Results is empty when the plan had no changes.
type Applied struct {
	Plan    *plan.Plan
	Results []*apply.Result
}

// Failed reports whether any step did not succeed.
func (a *Applied) Failed() bool {
	return slices.ContainsFunc(a.Results, func(r *apply.Result) bool { return r.Status != dag.Succeeded })
}

// Apply loads the stack, takes its lock on every cluster it uses, plans
// (or verifies the saved plan under the lock), lets req.Review see the
// plan, and executes it in dependency order.
func Apply(ctx context.Context, o Options, req ApplyRequest) (*Applied, error) {
	ls, err := Load(ctx, o.Source, Ordered)
	if err != nil {
		return nil, err
	}
	st := ls.Stack
	fwd := &forwarder{}
	copts := o.Clusters
	copts.Observer = fwd.event
	cl := NewClusters(copts)
	unlock, err := lockStack(ctx, st, cl, cmp.Or(req.Command, "convoy apply"))
	if err != nil {
		return nil, err
	}
	defer unlock()

	p, err := applyPlan(ctx, o, ls, cl, req)
	if err != nil || p == nil {
		return &Applied{Plan: p}, err
	}
	steps, err := newSteps(ctx, o, st, p, cl, req.KeepHistory)
	if err != nil {
		return nil, err
	}
	var view apply.Progress = apply.NoProgress{}
	if req.Progress != nil {
		view = req.Progress(rowsOf(steps))
	}
	fwd.set(view)
	results := apply.Execute(ctx, steps, apply.ExecOptions{Parallelism: o.parallelism(), Atomic: req.Atomic || st.Atomic, Progress: view})
	view.Close()
	fwd.set(nil)
	return &Applied{Plan: p, Results: results}, nil
}

// Destroy uninstalls every release of the stack, dependents first: a
// destroy plan, reviewed and applied like any other.
func Destroy(ctx context.Context, o Options, req ApplyRequest) (*Applied, error) {
	req.PlanFile = ""
	req.Plan.Destroy = true
	req.Command = cmp.Or(req.Command, "convoy destroy")
	return Apply(ctx, o, req)
}

// applyPlan is the plan to apply: the saved one, verified against what the
// cluster and the stack files hold now, or a fresh one the user reviewed.
// It returns nil (and no error) when there is nothing to do.
func applyPlan(ctx context.Context, o Options, ls *Loaded, cl *Clusters, req ApplyRequest) (*plan.Plan, error) {
	st := ls.Stack
	if req.PlanFile != "" {
		p, err := planfile.Read(req.PlanFile)
		if err != nil {
			return nil, err
		}
		if p.Stack != st.Name {
			return nil, fmt.Errorf("the plan in %s is for stack %q, not %q", req.PlanFile, p.Stack, st.Name)
		}
		if err := planfile.VerifyEnvironment(p, st.Environment); err != nil {
			return nil, fmt.Errorf("the plan in %s: %w", req.PlanFile, err)
		}
		hash, err := ls.ConfigHash()
		if err != nil {
			return nil, err
		}
		if err := planfile.VerifyConfig(p, hash); err != nil {
			return nil, err
		}
		if err := planfile.Verify(ctx, p, cl.ByName(ctx, st)); err != nil {
			return nil, err
		}
		return p, nil
	}
	p, err := computePlan(ctx, o, ls, cl, req.Plan)
	if err != nil {
		return nil, err
	}
	if req.Review != nil {
		if err := req.Review(p); err != nil {
			return p, err
		}
	}
	if !p.HasChanges() {
		return nil, nil
	}
	return p, nil
}

// lockStack takes the stack's lock on every cluster it uses, or none.
func lockStack(ctx context.Context, st *config.Stack, cl *Clusters, command string) (func(), error) {
	clusters, err := cl.Stack(ctx, st)
	if err != nil {
		return nil, err
	}
	var held []*Lock
	unlock := func() {
		for _, l := range held {
			_ = l.Release(context.WithoutCancel(ctx))
		}
	}
	for _, c := range clusters {
		l, err := AcquireEnvironment(ctx, c.Engine.Client(), st.ID(), st.Environment, command)
		if err != nil {
			unlock()
			return nil, err
		}
		held = append(held, l)
	}
	return unlock, nil
}

// newSteps turns the plan into the run: a step per release in the plan's
// order. Deploys execute the plan's rendered output (releases whose values
// were known only after apply are rendered when their dependencies are
// done); uninstalls of removed releases wait for every deploy; a destroy
// plan runs in reverse dependency order.
func newSteps(ctx context.Context, o Options, st *config.Stack, p *plan.Plan, cl *Clusters, keepHistory bool) ([]*apply.Step, error) {
	charts := o.charts()
	engineFor := cl.ByName(ctx, st)
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
			if !p.Destroy {
				step.DependsOn = deployIDs
			}
			step.Uninstall = release.UninstallRequest{Name: rc.Name, Namespace: rc.Namespace, Wait: true}
			if rc.Uninstall != nil {
				step.Uninstall = *rc.Uninstall
			}
			step.Uninstall.KeepHistory = keepHistory
		default:
			step.Kind = apply.StepDeploy
			deployIDs = append(deployIDs, rc.Addr)
			if rc.KnownAfterApply || rc.Saved == nil {
				prepare, err := renderAtApply(o, st, rc.Addr, eng, cl, charts)
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
	if p.Destroy {
		steps = reverseSteps(steps)
	}
	return steps, nil
}

// reverseSteps flips the dependencies: a release is uninstalled after
// everything that depends on it.
func reverseSteps(steps []*apply.Step) []*apply.Step {
	nodes := make([]dag.Node[string], len(steps))
	byID := map[string]*apply.Step{}
	for i, s := range steps {
		nodes[i] = dag.Node[string]{ID: s.ID, DependsOn: s.DependsOn}
		byID[s.ID] = s
	}
	var out []*apply.Step
	for _, n := range dag.Reverse(nodes) {
		s := byID[n.ID]
		s.DependsOn = n.DependsOn
		out = append(out, s)
	}
	return out
}

// renderAtApply renders a release when its step starts, with its
// dependencies' outputs. A diagnostic of the values known only now keeps
// its source range.
func renderAtApply(o Options, st *config.Stack, addrText string, eng *release.Engine, cl *Clusters, charts *resolve.Charts) (func(context.Context, map[string]*release.Release) (*release.Prepared, error), error) {
	addr, diags := config.ParseReleaseInstanceAddr(addrText)
	if diags.HasErrors() {
		return nil, &DiagnosticsError{Diags: diags}
	}
	inst := st.Release(addr)
	if inst == nil {
		return nil, fmt.Errorf("the plan has %s, which the stack does not define", addrText)
	}
	return func(ctx context.Context, applied map[string]*release.Release) (*release.Prepared, error) {
		cur := inst
		if !inst.Known {
			av, err := appliedAttributes(ctx, st, inst, applied, cl)
			if err != nil {
				return nil, err
			}
			again, diags := st.EvaluateRelease(addr, av)
			if diags.HasErrors() {
				return nil, &DiagnosticsError{Diags: diags}
			}
			cur = again
		}
		r, err := resolve.Resolve(charts, st.Dir, cur)
		if err != nil {
			return nil, err
		}
		return eng.Prepare(ctx, ReleaseRequest(st.ID(), r))
	}, nil
}

func rowsOf(steps []*apply.Step) []apply.Row {
	rows := make([]apply.Row, len(steps))
	for i, st := range steps {
		rows[i] = apply.Row{ID: st.ID, Namespace: st.Namespace, Name: st.Name}
	}
	return rows
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
