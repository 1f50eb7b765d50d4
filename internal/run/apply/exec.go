package apply

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/sensitive"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/dag"
)

// StepKind is what a step does to its release.
type StepKind int

// Step kinds.
const (
	StepDeploy StepKind = iota + 1
	StepUninstall
	StepNoOp
)

// Engine is what a step asks of its cluster's release engine
// (*release.Engine): the seam that lets the walk be tested against an
// in-memory fake, as Helm's actions are against a fake
// kube client and the memory storage driver.
type Engine interface {
	// Execute applies a prepared revision and returns the record it left,
	// also when it fails.
	Execute(ctx context.Context, p *release.Prepared) (*release.Release, error)
	Uninstall(ctx context.Context, req release.UninstallRequest) (*release.UninstallResult, error)
	Rollback(ctx context.Context, req release.RollbackRequest) (*release.Release, error)
	// LastRevision is the release's newest revision (0: none), which an
	// uninstall step checks against the plan's.
	LastRevision(ctx context.Context, namespace, name string) (int, error)
}

var _ Engine = (*release.Engine)(nil)

// Step is one release of a run.
type Step struct {
	ID              string
	Name, Namespace string
	DependsOn       []string
	Kind            StepKind
	Engine          Engine
	// Cluster is the API server the step's release is on: once the run
	// gives up on it, the steps on it that have not started do not start.
	Cluster kube.ClusterID
	// Prepare returns the release to execute when the step starts, after
	// its dependencies are applied: a fresh render, or a saved plan's output
	// rebuilt. applied holds the records of the steps that succeeded so far
	// (by ID), for values known only after apply.
	Prepare func(ctx context.Context, applied map[string]*release.Release) (*release.Prepared, error)
	// Uninstall is the request of a StepUninstall.
	Uninstall release.UninstallRequest
	// CheckRevision: ExpectRevision is the newest revision the plan
	// observed (0: none); a different one at apply time means the plan is
	// stale for this release.
	CheckRevision  bool
	ExpectRevision int
	// RunID labels the records a restore writes (release.RunLabel).
	RunID string
	// Unchanged, when set, says whether the prepared revision would
	// change nothing, and why: such a deploy is not executed (a release
	// rendered only now with its dependencies' new outputs that renders as
	// deployed writes no revision, release.Engine.SameAsDeployed), and its
	// result says why (Result.Unchanged).
	Unchanged func(ctx context.Context, p *release.Prepared) (why string, err error)
	// Finish runs after a deploy succeeded, before the step counts as
	// done (a rename deletes the old release's records); its error fails
	// the step, the deployed revision stays.
	Finish func(ctx context.Context) error
}

// Result is a step's outcome and the release record it left.
type Result struct {
	Outcome
	Step    *Step
	Release *release.Release
	// PreviousDeployed is the deployed revision before this run (0: none).
	PreviousDeployed int
	// Unchanged is why a deploy step wrote no revision (Step.Unchanged):
	// its release is as deployed, Release its deployed record.
	Unchanged string
	// ignore are the release's ignore_changes, which a restore keeps to.
	ignore kube.IgnoreRules
	// redact masks sensitive values in what a restore records.
	redact *sensitive.Redactor
}

// executor runs steps for Walk.
type executor struct {
	steps    map[string]*Step
	progress Progress
	mu       sync.Mutex
	results  map[string]*Result
	applied  map[string]*release.Release
	renders  chan struct{}
	fence    func(kube.ClusterID) release.Fence
}

// fenced is ctx for the work of step id: with the fence of its cluster
// (ExecOptions.Fence), when there is one.
func (x *executor) fenced(ctx context.Context, id string) context.Context {
	if x.fence == nil {
		return ctx
	}
	return release.WithFence(ctx, x.fence(x.steps[id].Cluster))
}

// DefaultRenders is how many releases an apply prepares at once: twice the
// CPUs the process may use (a preparation also waits on the API server).
func DefaultRenders() int { return 2 * runtime.GOMAXPROCS(0) }

func (x *executor) result(id string) *Result {
	x.mu.Lock()
	defer x.mu.Unlock()
	r := x.results[id]
	if r == nil {
		r = &Result{Step: x.steps[id]}
		x.results[id] = r
	}
	return r
}

func (x *executor) Run(ctx context.Context, id string) error {
	ctx = x.fenced(ctx, id)
	s := x.steps[id]
	x.progress.Started(id)
	res := x.result(id)
	switch s.Kind {
	case StepNoOp:
		return nil
	case StepUninstall:
		if s.CheckRevision {
			got, err := s.Engine.LastRevision(ctx, s.Namespace, s.Name)
			if err != nil {
				return err
			}
			if err := s.checkRevision(got); err != nil {
				return err
			}
		}
		u, err := s.Engine.Uninstall(ctx, s.Uninstall)
		if u != nil {
			res.Release = u.Release
		}
		return err
	}
	x.mu.Lock()
	applied := make(map[string]*release.Release, len(x.applied))
	for k, v := range x.applied {
		applied[k] = v
	}
	x.mu.Unlock()
	select {
	case x.renders <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	p, err := s.Prepare(ctx, applied)
	<-x.renders
	if err != nil {
		return err
	}
	got := 0
	if p.Last != nil {
		got = p.Last.Version
	}
	if s.CheckRevision {
		if err := s.checkRevision(got); err != nil {
			return err
		}
	}
	if p.Deployed != nil {
		res.PreviousDeployed = p.Deployed.Version
	}
	res.ignore, res.redact = p.Request.IgnoreChanges, p.Request.Redact
	if s.Unchanged != nil {
		why, err := s.Unchanged(ctx, p)
		if err != nil {
			return p.Request.Redact.Err(err)
		}
		if why != "" {
			res.Unchanged, res.Release = why, p.Deployed
			x.mu.Lock()
			x.applied[id] = p.Deployed
			x.mu.Unlock()
			return nil
		}
	}
	rel, err := s.Engine.Execute(ctx, p)
	err = p.Request.Redact.Err(err)
	res.Release = rel
	if err == nil && s.Finish != nil {
		err = s.Finish(ctx)
	}
	if err == nil {
		x.mu.Lock()
		x.applied[id] = rel
		x.mu.Unlock()
	}
	return err
}

// checkRevision refuses a step whose release is no longer at the revision
// the plan saw.
func (s *Step) checkRevision(got int) error {
	if got != s.ExpectRevision {
		return fmt.Errorf("stale plan: release %s/%s is at revision %d, the plan saw revision %d", s.Namespace, s.Name, got, s.ExpectRevision)
	}
	return nil
}

// Restore undoes what a deploy step changed: an install is uninstalled, an
// upgrade rolled back to the revision deployed before the run.
func (x *executor) Restore(ctx context.Context, id string) (bool, error) {
	ctx = x.fenced(ctx, id)
	s := x.steps[id]
	res := x.result(id)
	if s.Kind != StepDeploy || res.Release == nil || res.Unchanged != "" {
		return false, nil
	}
	if res.PreviousDeployed == 0 {
		_, err := s.Engine.Uninstall(ctx, release.UninstallRequest{Name: s.Name, Namespace: s.Namespace, Wait: true, RunID: s.RunID})
		if errors.Is(err, release.ErrReleaseNotFound) {
			return false, nil // already gone (its own atomic uninstalled it)
		}
		return err == nil, err
	}
	rb, err := s.Engine.Rollback(ctx, release.RollbackRequest{Name: s.Name, Namespace: s.Namespace, Revision: res.PreviousDeployed, Wait: release.WaitReady, IgnoreChanges: res.ignore, RunID: s.RunID, Redact: res.redact})
	if err == nil {
		res.Release = rb
	}
	return err == nil, err
}

// ExecOptions configure Execute.
type ExecOptions struct {
	// Parallelism bounds the releases in flight, waiting ones included
	// (0: dag.DefaultParallelism). Waiting costs no CPU: it is Renders that
	// bound the CPU-heavy part, and the clients' QPS the API calls.
	Parallelism int
	// Renders bounds the releases being prepared (records read, chart
	// rendered, objects built) at once; 0: DefaultRenders.
	Renders int
	// Atomic: when any step fails, every deploy step that ran is restored.
	Atomic bool
	// Progress is told how each step goes (nil: NoProgress).
	Progress Progress
	// Fence, when set, is the fence of each cluster's steps
	// (release.WithFence): the run's stack lock on that cluster only, so
	// that a cluster given up on, whose lock cannot be confirmed, does
	// not stop the writes to the others.
	Fence func(kube.ClusterID) release.Fence
}

// Execute runs the steps (in topological order) and returns a result per
// step, in that order.
func Execute(ctx context.Context, steps []*Step, opts ExecOptions) []*Result {
	renders := opts.Renders
	if renders <= 0 {
		renders = DefaultRenders()
	}
	var progress Progress = NoProgress{}
	if opts.Progress != nil {
		progress = opts.Progress
	}
	x := &executor{steps: map[string]*Step{}, progress: progress, results: map[string]*Result{}, applied: map[string]*release.Release{}, renders: make(chan struct{}, renders), fence: opts.Fence}
	nodes := make([]dag.Node[string], len(steps))
	for i, s := range steps {
		x.steps[s.ID] = s
		nodes[i] = dag.Node[string]{ID: s.ID, DependsOn: s.DependsOn}
	}
	outs := dag.Walk(ctx, nodes, &progressExec{x}, dag.WalkOptions[string]{
		Parallelism: opts.Parallelism,
		Atomic:      opts.Atomic,
		OnSkip:      progress.Skipped,
		// A step the run never started ends too: a view shows it cancelled,
		// not waiting, and before the steps skipped because of it.
		OnCancel: func(id string, err error) {
			progress.Finished(id, Outcome{ID: id, Status: dag.Cancelled, Err: err})
		},
		Halt: func(err error) func(string) error {
			ns := notStarted(err)
			if ns == nil {
				return nil
			}
			return func(id string) error {
				if string(x.steps[id].Cluster) != ns.Outage.Server {
					return nil // another cluster's: it goes on
				}
				return ns
			}
		},
	})
	results := make([]*Result, len(steps))
	for i, o := range outs {
		r := x.result(o.ID)
		r.Outcome = o
		results[i] = r
	}
	return results
}

// progressExec reports each finished step.
type progressExec struct{ *executor }

func (p *progressExec) Run(ctx context.Context, id string) error {
	start := time.Now()
	err := p.executor.Run(ctx, id)
	st := dag.Succeeded
	if err != nil {
		st = dag.Failed
	}
	p.progress.Finished(id, Outcome{ID: id, Status: st, Err: err, Duration: time.Since(start)})
	return err
}

// notStarted halts the releases of a cluster whose API server the run gave
// up on: a release started after that would only wait for the same server
// (those left end cancelled, each with a *NotStartedError). The releases
// of the stack's other clusters go on, as after any other failure: only
// those that depend on a failed one are skipped.
func notStarted(err error) *NotStartedError {
	var ue *kube.UnreachableError
	if !errors.As(err, &ue) {
		return nil
	}
	return &NotStartedError{Outage: ue.Outage}
}

// NotStartedError is a release the run did not start because it had
// given up on an API server.
type NotStartedError struct {
	Outage kube.Outage
}

func (e *NotStartedError) Error() string {
	return fmt.Sprintf("not started: the run gave up on %s", e.Outage)
}

// Unwrap makes it an unreachable API server too.
func (e *NotStartedError) Unwrap() error { return &kube.UnreachableError{Outage: e.Outage} }
