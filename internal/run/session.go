package run

import (
	"bytes"
	"context"
	"errors"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"path/filepath"
	"slices"
	"sync"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// Session is a stack opened for the operations of one command (the CLI)
// or one reconcile (the controller): loaded and evaluated once — its HCL
// parsed, its policies compiled, its SOPS files decrypted once — and its
// clusters connected once, whatever it then plans, verifies, applies or
// reads. Open it, call its methods, Close it. A Session is used by one
// goroutine at a time.
//
// Every operation starts from the stack as loaded: what one operation
// finds (the Helm names moved instances keep, keepMovedNames) is found
// again by the next, as separate runs would.
type Session struct {
	o Options
	// ls is the stack as loaded and evaluated; operations work on copies
	// of it (loaded).
	ls *Loaded
	// saved is the plan the session was opened to verify or apply
	// (OpenSaved): o.Source is the source it was made from.
	saved *SavedPlan
	// gone is the identity of a stack that can no longer be loaded
	// (OpenGone; ls is nil).
	gone stacklock.Identity

	mu sync.Mutex
	// clusters are the session's connections, by where plans take their
	// metadata lists from; made in Connections generation gen.
	clusters map[ListMode]*Clusters
	gen      uint64
	// fwd, while an Apply runs, receives the engines' steps.
	fwd     *forwarder
	cleanup []func()
}

// Open loads and evaluates the stack of o.Source. Errors are Load's: a
// *DiagnosticsError when the stack is at fault.
func Open(ctx context.Context, o Options) (*Session, error) {
	s := &Session{o: o}
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenSaved opens the stack a saved plan is verified and applied with: the
// one it was made from (savedPlanSource), which o.Source may only agree
// with (Open when saved is nil). A stack directory that is gone is
// unpacked from the plan's snapshot until Close.
func OpenSaved(ctx context.Context, o Options, saved *SavedPlan) (*Session, error) {
	if saved == nil {
		return Open(ctx, o)
	}
	src, cleanup, err := savedPlanSource(o.Source, saved)
	if err != nil {
		return nil, err
	}
	o.Source = src
	s := &Session{o: o, saved: saved, cleanup: []func(){cleanup}}
	if err := s.load(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// OpenGone opens a stack that can no longer be loaded (its source or
// variable values gone), known only by its identity: its releases can
// only be let go of (Abandon, on the default cluster); every other
// operation fails.
func OpenGone(o Options, id stacklock.Identity) *Session {
	return &Session{o: o, gone: id}
}

// errGone is what the operations of a stack opened by OpenGone fail with.
var errGone = errors.New("the stack can no longer be loaded: its releases can only be abandoned")

func (s *Session) load(ctx context.Context) error {
	ls, err := loadEvaluated(ctx, s.o.Source)
	if err != nil {
		return err
	}
	s.ls = ls
	return nil
}

// Close removes what the session unpacked (a saved plan's snapshot of
// its stack). Kept connections (ClusterOptions.Connections) stay kept.
func (s *Session) Close() {
	if s == nil {
		return
	}
	for _, c := range s.cleanup {
		c()
	}
	s.cleanup = nil
	s.mu.Lock()
	for _, cl := range s.clusters {
		cl.Close()
	}
	s.clusters = nil
	s.mu.Unlock()
}

// loaded is a copy of the stack as loaded, for one operation, ordered
// when ordered is set (the graph is built once).
func (s *Session) loaded(ordered bool) (*Loaded, error) {
	if s.ls == nil {
		return nil, errGone
	}
	if ordered {
		if err := s.ls.order(); err != nil {
			return nil, err
		}
	}
	cp := *s.ls
	cp.moves = nil
	return &cp, nil
}

// options are the session's options for a stack of it, plans taking
// their metadata lists as lists says (zero: the options').
func (s *Session) options(lists ListMode) Options {
	o := s.o.forStack(s.ls.Stack)
	if lists == ListShared {
		o.Clusters.Lists = lists
	}
	return o
}

// clustersOf are the session's connections for o (options): made once
// per list mode, and again once the kept Connections were forgotten (an
// apply that may have installed kinds, a failure), as a new run would.
func (s *Session) clustersOf(o Options) *Clusters {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen := o.Clusters.Connections.generation(); gen != s.gen || s.clusters == nil {
		for _, cl := range s.clusters {
			cl.Close()
		}
		s.clusters, s.gen = map[ListMode]*Clusters{}, gen
	}
	mode := o.Clusters.Lists
	if cl, ok := s.clusters[mode]; ok {
		return cl
	}
	cl := o.newClusters(s.observe)
	s.clusters[mode] = cl
	return cl
}

// observe hands an engine's step to the running Apply's view, else to
// ClusterOptions.Observer.
func (s *Session) observe(ev release.Event) {
	s.mu.Lock()
	fwd := s.fwd
	s.mu.Unlock()
	switch {
	case fwd != nil:
		fwd.event(ev)
	case s.o.Clusters.Observer != nil:
		s.o.Clusters.Observer(ev)
	}
}

// Plan computes the stack's plan. It changes nothing. A plan that would
// change releases other stacks own comes back with a
// *plan.ForeignError: it can be shown, never applied.
func (s *Session) Plan(ctx context.Context, req PlanRequest) (*Planned, error) {
	ls, err := s.loaded(true)
	if err != nil {
		return nil, err
	}
	o := s.options(req.Lists)
	return planOn(ctx, o, ls, s.clustersOf(o), req)
}

// Verify checks a saved plan as Apply does before it executes one
// (stack, environment, configuration, clusters, every observation),
// without taking the lock or writing anything: the labels Apply writes on
// the records of unchanged releases are written by Apply alone, under the
// lock. A plan whose observations no longer hold is a *StaleError; the
// denials of policies are not checked (they are the plan's own results:
// Apply refuses them). The plan is verified against the stack it was made
// from: the session's when the session's source is that (same directory,
// environment and variable values), else that stack loaded for it.
func (s *Session) Verify(ctx context.Context, saved *SavedPlan) error {
	t, done, err := s.forPlan(ctx, saved)
	if err != nil {
		return err
	}
	defer done()
	ls, err := t.loaded(true)
	if err != nil {
		return err
	}
	o := t.options(ListDirect)
	return verifyOn(ctx, o, ls, t.clustersOf(o), saved)
}

// Apply takes the stack's lock on every cluster it uses, plans (or
// verifies the saved plan req.Saved under the lock), refuses a plan that
// would change releases other stacks own, lets req.Review see the plan,
// marks failed the records interrupted runs of the stack left pending,
// and executes the plan in dependency order. A saved plan is applied with
// the stack it was made from, as Verify says.
func (s *Session) Apply(ctx context.Context, req ApplyRequest) (*Applied, error) {
	t, done, err := s.forPlan(ctx, req.Saved)
	if err != nil {
		return nil, err
	}
	defer done()
	ls, err := t.loaded(true)
	if err != nil {
		return nil, err
	}
	o := t.options(ListDirect)
	cl := t.clustersOf(o)
	fwd := &forwarder{}
	t.mu.Lock()
	t.fwd = fwd
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.fwd = nil
		t.mu.Unlock()
	}()
	return applyOn(ctx, o, ls, cl, fwd, req)
}

// Destroy uninstalls every release of the stack, dependents first: a
// destroy plan, reviewed and applied like any other.
func (s *Session) Destroy(ctx context.Context, req ApplyRequest) (*Applied, error) {
	return s.Apply(ctx, destroyRequest(req))
}

// Output returns the outputs of the named releases (addresses or Helm
// release names; none: every release of the stack), in the stack's order.
func (s *Session) Output(ctx context.Context, names []string) ([]ReleaseOutput, error) {
	ls, err := s.loaded(true)
	if err != nil {
		return nil, err
	}
	o := s.options(ListDirect)
	return outputOn(ctx, o, ls, s.clustersOf(o), names)
}

// Identity is the stack's identity: its name and environment, and the
// clusters it uses resolved to what they connect to, without connecting.
func (s *Session) Identity(context.Context) (stacklock.Identity, error) {
	if s.ls == nil {
		return s.gone, nil
	}
	return identityOf(s.o, s.ls)
}

// Loaded is a copy of the stack as loaded and evaluated, with the
// warnings of its load; ordered, its releases also in dependency order
// (an error when its graph is not valid: cycles, unknown references).
func (s *Session) Loaded(ordered bool) (*Loaded, error) {
	return s.loaded(ordered)
}

// connected is the stack in order, with the options and the connections
// of an operation that reads or changes its releases, the Helm names its
// moved blocks carry kept: what every such operation starts with.
func (s *Session) connected(ctx context.Context) (*Loaded, Options, *Clusters, error) {
	ls, err := s.loaded(true)
	if err != nil {
		return nil, Options{}, nil, err
	}
	o := s.options(ListDirect)
	cl := s.clustersOf(o)
	if err := ls.keepMovedNames(ctx, cl); err != nil {
		return nil, Options{}, nil, err
	}
	return ls, o, cl, nil
}

// forPlan is the session a saved plan is verified and applied with, and
// what to call when done with it: s itself when saved is nil, is the plan
// s was opened for, or was made from s's source; else a session of the
// plan's source (savedPlanSource, given s's source), closed by done.
func (s *Session) forPlan(ctx context.Context, saved *SavedPlan) (*Session, func(), error) {
	nothing := func() {}
	if saved == nil || saved == s.saved {
		return s, nothing, nil
	}
	src, cleanup, err := savedPlanSource(s.given(), saved)
	if err != nil {
		return nil, nothing, err
	}
	if s.madeFrom(src) {
		cleanup()
		return s, nothing, nil
	}
	o := s.o
	o.Source = src
	t := &Session{o: o, saved: saved, cleanup: []func(){cleanup}}
	if err := t.load(ctx); err != nil {
		t.Close()
		return nil, nothing, err
	}
	return t, t.Close, nil
}

// given is the source a saved plan given to the session must agree with
// (savedPlanSource): the session's, without its directory when the stack
// is confined to an artifact (Source.Root, the controller's): the caller
// pulled the plan's artifact by digest and named its directory in the
// plan.
func (s *Session) given() Source {
	g := s.o.Source
	if g.Root != "" {
		g.Dir = ""
	}
	return g
}

// madeFrom says whether loading src would load the session's stack as
// it is: the same directory, confinement, policy paths, variable values
// and environment (the one the session chose when it named none).
func (s *Session) madeFrom(src Source) bool {
	mine := s.o.Source
	a, erra := filepath.Abs(src.Dir)
	b, errb := filepath.Abs(mine.Dir)
	if erra != nil || errb != nil || !sameDir(a, b) {
		return false
	}
	if src.Root != mine.Root || !slices.Equal(src.PolicyPaths, mine.PolicyPaths) || !sameValues(src.Variables, mine.Variables) {
		return false
	}
	return src.Environment == mine.Environment ||
		mine.Environment == "" && s.ls.Stack.Environment == src.Environment
}

// sameValues says whether two lists of variable values are the same
// values in the same order.
func sameValues(a, b config.RawValues) bool {
	return slices.EqualFunc(a, b, func(x, y config.RawValue) bool {
		return x.Source == y.Source && x.Where == y.Where && x.Name == y.Name && x.Text == y.Text &&
			bytes.Equal(x.File, y.File) && x.Sensitive == y.Sensitive
	})
}
