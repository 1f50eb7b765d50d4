package run

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/run/apply"
	"github.com/convoy-sh/convoy/internal/stack/addrs"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/dag"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
)

// ApplyRequest says what to apply and how to involve the user.
type ApplyRequest struct {
	// Saved is a plan saved by `convoy plan --out` (ReadPlanFile,
	// DecodePlan); nil computes a plan.
	Saved *SavedPlan
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
	// Note is added to the description of every record the run writes
	// (helm history shows it): the controller says who approved the plan.
	Note string
}

// Applied is what a run did: the plan it executed and what it did to each
// release (in the plan's order; outcome.go). Releases is empty when the
// plan had no changes. A run that executed returns it also with an error
// (the stack lock could not be released).
type Applied struct {
	Plan     *plan.Plan
	Releases []ReleaseOutcome
}

// Failed reports whether any release's step did not succeed.
func (a *Applied) Failed() bool {
	return slices.ContainsFunc(a.Releases, func(o ReleaseOutcome) bool { return o.Step != dag.Succeeded })
}

// applyOn is Session.Apply of a loaded stack on the clusters cl connects, whose
// engines report their steps to fwd (o is forStack'd).
func applyOn(ctx context.Context, o Options, ls *Loaded, cl *Clusters, fwd *forwarder, req ApplyRequest) (res *Applied, err error) {
	st := ls.Stack
	lock, err := lockStack(ctx, o, st, cl, cmp.Or(req.Command, "convoy apply"))
	if err != nil {
		return nil, err
	}
	defer func() { err = lock.finish(ctx, err) }()
	ctx, stopFence := lock.fence(ctx)
	defer stopFence()
	if err := ls.keepMovedNames(ctx, cl); err != nil {
		return nil, err
	}
	st = ls.Stack

	if req.Saved != nil && largeRelease(req.Saved.Plan) {
		// From its verification on, which reads its records.
		defer release.TightHeap()()
	}
	p, err := applyPlan(ctx, o, ls, cl, req, lock.runID)
	if err != nil || p == nil {
		return &Applied{Plan: p}, err
	}
	if req.Saved == nil && largeRelease(p) {
		defer release.TightHeap()()
	}
	if err := healInterrupted(ctx, o, p, cl.ByName(ctx, st), lock.runID); err != nil {
		return &Applied{Plan: p}, err
	}
	if err := forget(ctx, p, cl.ByName(ctx, st), st.ID()); err != nil {
		return &Applied{Plan: p}, err
	}
	if err := finishRenames(ctx, o, p, cl.ByName(ctx, st)); err != nil {
		return &Applied{Plan: p}, err
	}
	steps, err := newSteps(ctx, o, ls, p, cl, req.KeepHistory, lock.runID, req.Note)
	if err != nil {
		return nil, err
	}
	var view apply.Progress = apply.NoProgress{}
	if req.Progress != nil {
		view = maskingProgress{Progress: req.Progress(rowsOf(steps)), red: p.Redactor()}
	}
	fwd.set(view)
	results := apply.Execute(ctx, steps, apply.ExecOptions{Parallelism: o.parallelism(), Atomic: req.Atomic || st.Atomic, Progress: view, Fence: lock.holdsOn})
	// Releases deployed before the run wrote CRDs were fingerprinted with
	// the kinds served before (release.Engine.Resettle).
	cl.resettle(ctx)
	view.Close()
	fwd.set(nil)
	out := outcomesOf(p, results)
	if lock.lost() != nil {
		// Another run took the stack over: what this run's steps left
		// is not what the records say now.
		recordsNow(context.WithoutCancel(ctx), out, cl.ByName(ctx, st))
	}
	return &Applied{Plan: p, Releases: out}, nil
}

// largeRelease reports whether the plan deploys a large release
// (release.LargeRendering): applying it reads its records, parses its
// objects and writes its record, each about its size again.
func largeRelease(p *plan.Plan) bool {
	return slices.ContainsFunc(p.Releases, func(rc *plan.ReleaseChange) bool {
		return rc.Saved != nil && release.LargeRendering(rc.Saved.Rendered)
	})
}

// destroyRequest is req as Destroy runs it.
func destroyRequest(req ApplyRequest) ApplyRequest {
	req.Saved = nil
	req.Plan.Destroy = true
	req.Command = cmp.Or(req.Command, "convoy destroy")
	return req
}

// applyPlan is the plan to apply: the saved one, verified against what the
// cluster and the stack files hold now, or a fresh one the user reviewed.
// It returns nil (and no error) when there is nothing to do. It runs
// under the stack lock (runID the holding run's): it writes the labels
// the plan found missing on unchanged releases (relabel), which nothing
// else does.
func applyPlan(ctx context.Context, o Options, ls *Loaded, cl *Clusters, req ApplyRequest, runID string) (*plan.Plan, error) {
	st := ls.Stack
	if saved := req.Saved; saved != nil {
		p, err := verifySaved(ctx, o, ls, cl, saved, req.Plan.AllowPolicies)
		if err != nil {
			return p, err
		}
		p.DropObjectStates()
		// As for a computed plan: an unchanged release keeps the labels a
		// move (its address) or an incremental plan needs.
		relabel(ctx, o, p, cl, st, runID)
		return p, nil
	}
	fresh := req.Plan
	fresh.Observe = planner.ObserveMetadata // applied at once, never verified
	p, err := computePlan(ctx, o, ls, cl, fresh, heldBy(runID), nil)
	if err != nil {
		return p, err
	}
	// Nothing a policy denies is applied, nor offered for approval.
	if err := p.PolicyDenied(); err != nil {
		return p, err
	}
	if req.Review != nil {
		if err := req.Review(p); err != nil {
			return p, err
		}
	}
	p.DropObjectStates()
	relabel(ctx, o, p, cl, st, runID)
	if !p.HasChanges() {
		return nil, nil
	}
	return p, nil
}

// verifySaved checks a saved plan against the stack and the clusters as
// they are now (stack, environment, configuration, clusters, every
// observation, promotions, ownership, policies with allow allowed),
// writing nothing: the plan, or why it may not be applied.
func verifySaved(ctx context.Context, o Options, ls *Loaded, cl *Clusters, saved *SavedPlan, allow []string) (*plan.Plan, error) {
	st := ls.Stack
	p := saved.Plan
	if p.Stack != st.Name {
		return nil, fmt.Errorf("the plan in %s is for stack %q, not %q", saved.Name, p.Stack, st.Name)
	}
	if err := verifyEnvironment(p, st.Environment); err != nil {
		return nil, fmt.Errorf("the plan in %s: %w", saved.Name, err)
	}
	hash, err := ls.ConfigHash()
	if err != nil {
		return nil, err
	}
	if err := VerifyConfig(p, hash); err != nil {
		return nil, err
	}
	if err := verifyClusters(ctx, saved.Origin, cl, st, saved.Name); err != nil {
		return nil, err
	}
	if err := VerifyObserved(ctx, p, cl.ByName(ctx, st)); err != nil {
		return nil, err
	}
	if err := verifyPromotions(ctx, o, p); err != nil {
		return nil, err
	}
	if err := p.Foreign(); err != nil {
		return p, err
	}
	p.Allow(allow)
	if err := p.PolicyDenied(); err != nil {
		return p, err
	}
	return p, nil
}

// relabel writes the labels the plan found missing or stale on the
// deployed records of unchanged releases (plan.ReleaseChange.Relabel), so
// that later plans prove them unchanged without rendering them. It writes
// no revision; a failure only costs later plans time, and is announced.
// Only a run holding the stack lock writes them (runID its id): without
// one, it writes nothing.
func relabel(ctx context.Context, o Options, p *plan.Plan, cl *Clusters, st *config.Stack, runID string) {
	if runID == "" {
		return
	}
	engineFor := cl.ByName(ctx, st)
	var todo []*plan.ReleaseChange
	for _, rc := range p.Releases {
		if rc.Action == plan.ActionNoOp && len(rc.Relabel) > 0 {
			todo = append(todo, rc)
		}
	}
	_ = forEach(ctx, o.parallelism(), len(todo), func(i int) {
		rc := todo[i]
		eng, err := engineFor(rc.Cluster)
		if err == nil {
			err = eng.Relabel(ctx, rc.Namespace, rc.Name, rc.Observed.LastRevision, rc.Relabel)
		}
		if err != nil {
			o.announce(fmt.Sprintf("%s: not labelled for incremental plans: %v", rc.Addr, err))
		}
	})
}

// newSteps turns the plan into the run: a step per release in the plan's
// order. Deploys execute the plan's rendered output (releases whose values
// were known only after apply are rendered when their dependencies are
// done); uninstalls of removed releases wait for every deploy; a destroy
// plan runs in reverse dependency order.
func newSteps(ctx context.Context, o Options, ls *Loaded, p *plan.Plan, cl *Clusters, keepHistory bool, runID, note string) ([]*apply.Step, error) {
	st := ls.Stack
	charts := o.charts()
	// Promoted releases rendered only now render the promoted chart.
	promoted, err := promotedCharts(p, charts, st)
	if err != nil {
		return nil, err
	}
	if promoted != nil {
		charts = charts.WithPinned(promoted)
	}
	engineFor := cl.ByName(ctx, st)
	// What the records keep is masked as the plan masks what it prints.
	redact := p.Redactor()
	var steps []*apply.Step
	var deployIDs []string
	for _, rc := range p.Releases {
		eng, err := engineFor(rc.Cluster)
		if err != nil {
			return nil, err
		}
		step := &apply.Step{
			ID: rc.Addr.String(), Name: rc.Name, Namespace: rc.Namespace, DependsOn: addrStrings(rc.DependsOn), Engine: eng, Cluster: eng.Kube().ClusterID(),
			CheckRevision: true, ExpectRevision: rc.Observed.LastRevision, RunID: runID,
		}
		switch rc.Action {
		case plan.ActionNoOp, plan.ActionForget:
			// Forgotten releases are unlabelled before the walk (forget).
			step.Kind = apply.StepNoOp
		case plan.ActionUninstall:
			step.Kind = apply.StepUninstall
			if !p.Destroy {
				step.DependsOn = deployIDs
			}
			step.Uninstall = planner.UninstallRequestOf(rc.Name, rc.Namespace, rc.Uninstall)
			step.Uninstall.KeepHistory = keepHistory
			step.Uninstall.RunID = runID
			step.Uninstall.Redact = redact
		default:
			step.Kind = apply.StepDeploy
			deployIDs = append(deployIDs, rc.Addr.String())
			if rc.KnownAfterApply || rc.Saved == nil {
				prepare, err := renderAtApply(o, ls, p, rc, eng, cl, charts, runID, note)
				if err != nil {
					return nil, err
				}
				step.Prepare = prepare
				if rc.KnownAfterApply && rc.Action == plan.ActionUpgrade {
					why := unchangedOutputs(p, rc)
					step.Unchanged = func(ctx context.Context, prep *release.Prepared) (string, error) {
						same, err := eng.SameAsDeployed(ctx, prep)
						if !same || err != nil {
							return "", err
						}
						return why, nil
					}
				}
			} else {
				saved, name, namespace, replace, note, absent, leftovers := rc.Saved, rc.Name, rc.Namespace, planner.ReplacesOf(rc), recordNote(p, rc, note), planner.AbsentOf(rc), planner.LeftoversOf(rc)
				expand := planner.ResizesOf(rc)
				checks := ls.healthOf(rc.Addr.Instance.Release.Name)
				none := rc.Observed.LastRevision == 0
				inst := ls.Stack.Release(rc.Addr.Instance)
				step.Prepare = func(ctx context.Context, _ map[string]*release.Release) (*release.Prepared, error) {
					req := planner.RequestOf(name, namespace, saved.Settings)
					if inst != nil && !rc.Addr.IsRemoved() {
						// Not rendered again: the chart lets the engine
						// settle the deployed record (release.Engine.Settle),
						// which it does only when the chart is the one
						// planned (its fingerprint). It renders the chart
						// again only for a rendering that looked objects
						// up, or read capabilities that changed: else its
						// facts serve, and its files are not held.
						if ch, err := charts.LoadUnkept(ls.Stack.Dir, inst); err == nil {
							if !saved.Rendered.Impure && !ch.UsesCapabilities() {
								ch = ch.Facts()
							}
							req.Chart = ch
						}
					}
					req.RunID, req.Redact, req.Note, req.Replace, req.Absent, req.Leftovers = runID, redact, note, replace, absent, leftovers
					if checks != nil {
						req.Health = checks
					}
					req.Expand = expand
					if none {
						// The plan found no record (under this run's
						// lock): not listed again. Creating revision 1
						// fails if anyone installed it since.
						return eng.PrepareRenderedWithHistory(&req, nil, saved.Rendered)
					}
					return eng.PrepareRendered(ctx, &req, saved.Rendered)
				}
			}
			if rc.Rename != nil {
				renameStep(step, rc, eng)
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
// dependencies' outputs, and evaluates the stack's policies on what it
// rendered: a denial stops it before anything of it is applied. A
// diagnostic of the values known only now keeps its source range.
func renderAtApply(o Options, ls *Loaded, p *plan.Plan, rc *plan.ReleaseChange, eng *release.Engine, cl *Clusters, charts *resolve.Charts, runID, note string) (func(context.Context, map[string]*release.Release) (*release.Prepared, error), error) {
	st := ls.Stack
	at := rc.Addr
	inst := st.Release(at.Instance)
	if at.IsRemoved() || inst == nil {
		return nil, fmt.Errorf("the plan has %s, which the stack does not define", at)
	}
	addr := inst.Addr
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
		// Sensitive values the plan could not know (parts of values known
		// only now) are masked in errors and records too.
		red := p.RedactorWith(resolve.SensitiveValues(cur))
		r, err := resolve.Resolve(charts, st.Dir, cur)
		if err != nil {
			return nil, red.Err(err)
		}
		req := ls.releaseRequest(o, st.ID(), r)
		req.RunID, req.Redact = runID, red
		req.Replace, req.Note, req.Leftovers = planner.ReplacesOf(rc), recordNote(p, rc, note), planner.LeftoversOf(rc)
		prep, err := eng.Prepare(ctx, req)
		if err != nil {
			return nil, red.Err(err)
		}
		if err := checkAtApply(ctx, o, ls.Policies, p, rc, eng, prep, red); err != nil {
			return nil, red.Err(err)
		}
		return prep, nil
	}, nil
}

// unchangedOutputs is why a release rendered at apply with the outputs of
// the dependencies this plan changes writes no revision when it renders
// as deployed: "outputs of release.db read but unchanged".
func unchangedOutputs(p *plan.Plan, rc *plan.ReleaseChange) string {
	var changed []string
	for _, d := range rc.DependsOn {
		if dep := p.Release(d.String()); dep != nil && dep.Action != plan.ActionNoOp {
			changed = append(changed, d.String())
		}
	}
	if len(changed) == 0 {
		return "outputs read but unchanged"
	}
	return "outputs of " + strings.Join(changed, ", ") + " read but unchanged"
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

// addrStrings are the step IDs of release addresses.
func addrStrings(as []addrs.ReleaseInstance) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.String()
	}
	return out
}

// recordNote is what the description of a release's new record adds: the
// environment its chart was promoted from (helm history shows it), the
// policies whose denials the plan overrode, and the run's note (who
// approved the plan).
func recordNote(p *plan.Plan, rc *plan.ReleaseChange, note string) string {
	var notes []string
	if rc.PromotedFrom != nil {
		notes = append(notes, rc.PromotedFrom.Note())
	}
	if n := p.PolicyNote(rc.Addr.String()); n != "" {
		notes = append(notes, n)
	}
	if note != "" {
		notes = append(notes, note)
	}
	return strings.Join(notes, "; ")
}
