// Package applytest is an in-memory apply.Engine for tests of the apply
// walk and of what drives it: release records held per release, every call
// recorded, failures and holds on demand. It renders and applies nothing;
// it keeps the records as the release engine would.
package applytest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/run/apply"
)

var _ apply.Engine = (*Engine)(nil)

// Op is an engine operation.
type Op string

// The operations of apply.Engine.
const (
	OpExecute   Op = "execute"
	OpUninstall Op = "uninstall"
	OpRollback  Op = "rollback"
)

// Call is one call the engine received, in the order received.
type Call struct {
	Op              Op
	Namespace, Name string
	// Revision is the revision an execute writes, or the one a rollback
	// restores.
	Revision  int
	Uninstall release.UninstallRequest
	Rollback  release.RollbackRequest
	// CtxErr is the context's error when the call arrived (a restore
	// must run with a live context after the run's ended).
	CtxErr error
}

// failure is an injected failure of one operation on one release.
type failure struct {
	err error
	// unrecorded: an execute fails before writing a revision (as a
	// validation error does).
	unrecorded bool
}

// Engine is the fake. The zero value is not usable: use New.
type Engine struct {
	mu       sync.Mutex
	history  map[string][]*release.Release // namespace/name → oldest first
	calls    []Call
	failures map[Op]map[string]failure
	holds    map[Op]map[string]chan struct{}
	entered  chan string
	inFlight int
	peak     int
}

// New returns an engine holding no releases.
func New() *Engine {
	return &Engine{
		history:  map[string][]*release.Release{},
		failures: map[Op]map[string]failure{},
		holds:    map[Op]map[string]chan struct{}{},
		entered:  make(chan string, 1024),
	}
}

func key(namespace, name string) string { return namespace + "/" + name }

// Seed gives a release a history: revision i+1 has statuses[i].
func (e *Engine) Seed(namespace, name string, statuses ...release.Status) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var h []*release.Release
	for i, st := range statuses {
		h = append(h, &release.Release{Name: name, Namespace: namespace, Version: i + 1, Info: &release.Info{Status: st}})
	}
	e.history[key(namespace, name)] = h
}

// History returns a copy of the release's records, oldest first.
func (e *Engine) History(namespace, name string) []*release.Release {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*release.Release
	for _, r := range e.history[key(namespace, name)] {
		out = append(out, clone(r))
	}
	return out
}

// Statuses returns the statuses of the release's records, oldest first.
func (e *Engine) Statuses(namespace, name string) []release.Status {
	var out []release.Status
	for _, r := range e.History(namespace, name) {
		out = append(out, r.Info.Status)
	}
	return out
}

// Calls returns the calls received so far.
func (e *Engine) Calls() []Call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls)
}

// CallsTo returns the calls received for one release.
func (e *Engine) CallsTo(namespace, name string) []Call {
	var out []Call
	for _, c := range e.Calls() {
		if c.Namespace == namespace && c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// Peak is the most executes and uninstalls that were under way at once.
func (e *Engine) Peak() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.peak
}

// Fail makes op on the release fail with err. A failed execute records a
// failed revision and returns it with err, as the release engine does when
// a deploy fails after it was recorded.
func (e *Engine) Fail(op Op, namespace, name string, err error) {
	e.setFailure(op, namespace, name, failure{err: err})
}

// FailUnrecorded makes an execute of the release fail with err before it
// records anything (as a validation error does).
func (e *Engine) FailUnrecorded(namespace, name string, err error) {
	e.setFailure(OpExecute, namespace, name, failure{err: err, unrecorded: true})
}

func (e *Engine) setFailure(op Op, namespace, name string, f failure) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failures[op] == nil {
		e.failures[op] = map[string]failure{}
	}
	e.failures[op][key(namespace, name)] = f
}

// Hold makes op (an execute or an uninstall) of the release wait, once it
// started, until the returned func is called or its context ends (then it
// fails with the context's error, an execute leaving a failed revision).
func (e *Engine) Hold(op Op, namespace, name string) (release func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	gate := make(chan struct{})
	if e.holds[op] == nil {
		e.holds[op] = map[string]chan struct{}{}
	}
	e.holds[op][key(namespace, name)] = gate
	var once sync.Once
	return func() { once.Do(func() { close(gate) }) }
}

// Entered receives "namespace/name" each time an execute or an uninstall
// starts (before any hold): what a test waits on instead of sleeping. It
// buffers 1024 starts; a test that starts more must drain it.
func (e *Engine) Entered() <-chan string { return e.entered }

// enter records the call and counts it in flight until the returned func.
func (e *Engine) enter(ctx context.Context, c Call) (gate chan struct{}, fail failure, leave func()) {
	c.CtxErr = ctx.Err()
	k := key(c.Namespace, c.Name)
	e.mu.Lock()
	e.calls = append(e.calls, c)
	fail = e.failures[c.Op][k]
	if c.Op != OpRollback {
		gate = e.holds[c.Op][k]
		e.inFlight++
		e.peak = max(e.peak, e.inFlight)
	}
	e.mu.Unlock()
	if c.Op != OpRollback {
		e.entered <- k
	}
	return gate, fail, func() {
		if c.Op != OpRollback {
			e.mu.Lock()
			e.inFlight--
			e.mu.Unlock()
		}
	}
}

// wait waits for the gate (nil: none) or the context.
func wait(ctx context.Context, gate chan struct{}) error {
	if gate == nil {
		return nil
	}
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Execute writes revision p.Revision: deployed (the deployed one before it
// superseded), or failed when told to fail.
func (e *Engine) Execute(ctx context.Context, p *release.Prepared) (*release.Release, error) {
	ns, name := p.Request.Namespace, p.Request.Name
	gate, fail, leave := e.enter(ctx, Call{Op: OpExecute, Namespace: ns, Name: name, Revision: p.Revision})
	defer leave()
	err := wait(ctx, gate)
	if err == nil {
		err = fail.err
	}
	if err != nil && fail.unrecorded {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.history[key(ns, name)]
	if n := len(h); n > 0 && h[n-1].Version != p.Revision-1 {
		return nil, fmt.Errorf("release %s/%s changed since it was prepared (revision %d, prepared on %d)", ns, name, h[n-1].Version, p.Revision-1)
	}
	rel := &release.Release{Name: name, Namespace: ns, Version: p.Revision, Config: p.Request.Values,
		Info: &release.Info{Status: release.StatusDeployed, LastDeployed: time.Now(), Description: "Upgrade complete"}}
	if p.IsInstall {
		rel.Info.Description = "Install complete"
	}
	if err != nil {
		rel.Info.Status, rel.Info.Description = release.StatusFailed, "failed: "+err.Error()
	} else {
		supersede(h)
	}
	e.history[key(ns, name)] = append(h, rel)
	return clone(rel), err
}

// Uninstall removes the release's records (KeepHistory: marks the newest
// uninstalled).
func (e *Engine) Uninstall(ctx context.Context, req release.UninstallRequest) (*release.UninstallResult, error) {
	gate, fail, leave := e.enter(ctx, Call{Op: OpUninstall, Namespace: req.Namespace, Name: req.Name, Uninstall: req})
	defer leave()
	if err := wait(ctx, gate); err != nil {
		return nil, err
	}
	if fail.err != nil {
		return nil, fail.err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	k := key(req.Namespace, req.Name)
	h := e.history[k]
	if len(h) == 0 {
		return nil, fmt.Errorf("release %s/%s: %w", req.Namespace, req.Name, release.ErrReleaseNotFound)
	}
	last := h[len(h)-1]
	last.Info.Status, last.Info.Description = release.StatusUninstalled, "Uninstallation complete"
	if !req.KeepHistory {
		delete(e.history, k)
	}
	return &release.UninstallResult{Release: clone(last)}, nil
}

// Rollback writes a new deployed revision restoring req.Revision.
func (e *Engine) Rollback(ctx context.Context, req release.RollbackRequest) (*release.Release, error) {
	_, fail, leave := e.enter(ctx, Call{Op: OpRollback, Namespace: req.Namespace, Name: req.Name, Revision: req.Revision, Rollback: req})
	defer leave()
	if fail.err != nil {
		return nil, fail.err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	k := key(req.Namespace, req.Name)
	h := e.history[k]
	i := slices.IndexFunc(h, func(r *release.Release) bool { return r.Version == req.Revision })
	if i < 0 {
		return nil, fmt.Errorf("release %s has no revision %d to roll back to: %w", req.Name, req.Revision, release.ErrReleaseNotFound)
	}
	supersede(h)
	rel := &release.Release{Name: req.Name, Namespace: req.Namespace, Version: h[len(h)-1].Version + 1, Config: h[i].Config,
		Info: &release.Info{Status: release.StatusDeployed, LastDeployed: time.Now(), Description: fmt.Sprintf("Rollback to %d", req.Revision), RollbackRevision: req.Revision}}
	e.history[k] = append(h, rel)
	return clone(rel), nil
}

// LastRevision is the newest revision the engine holds of the release (0:
// none).
func (e *Engine) LastRevision(_ context.Context, namespace, name string) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.history[key(namespace, name)]
	if len(h) == 0 {
		return 0, nil
	}
	return h[len(h)-1].Version, nil
}

// Prepare returns a Step.Prepare for the release req names: it observes
// the records the engine holds as release.Engine.Prepare does (the newest,
// the newest deployed, the next revision), and renders nothing.
func (e *Engine) Prepare(req release.Request) func(context.Context, map[string]*release.Release) (*release.Prepared, error) {
	return func(context.Context, map[string]*release.Release) (*release.Prepared, error) {
		r := req
		p := &release.Prepared{Request: &r, History: e.History(req.Namespace, req.Name), Revision: 1}
		for _, rec := range p.History {
			p.Last = rec
			if rec.Info.Status == release.StatusDeployed {
				p.Deployed = rec
			}
		}
		if p.Last != nil {
			p.Revision = p.Last.Version + 1
		}
		p.IsInstall = p.Last == nil || (p.Last.Info.Status == release.StatusUninstalled && p.Deployed == nil)
		return p, nil
	}
}

// supersede marks the deployed records of a history superseded.
func supersede(h []*release.Release) {
	for _, r := range h {
		if r.Info.Status == release.StatusDeployed {
			r.Info.Status = release.StatusSuperseded
		}
	}
}

func clone(r *release.Release) *release.Release {
	c := *r
	info := *r.Info
	c.Info = &info
	return &c
}
