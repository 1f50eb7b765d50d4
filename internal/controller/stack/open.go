package stack

import (
	"context"
	"errors"
	"os"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/hashicorp/hcl/v2"
)

// stackRun is a Stack opened for a reconcile, a Pipeline's gate or a
// deletion (openStack): its source pulled, its files parsed once, its
// inputs read as its identity, and the stack opened on them.
type stackRun struct {
	st      *v1alpha1.Stack
	fetched *artifact.Fetched
	// cfg is the stack's files as parsed (once: the session loads them
	// without parsing again).
	cfg  *config.Config
	in   *inputs
	opts run.Options
	// session is the stack opened on opts (open): every plan, check,
	// apply, test or uninstall of the reconcile uses it.
	session *run.Session
	// res resolves the stack's charts (open fills the chart cache with it).
	res *source.Resolver
	tmp string
	// held are the cache entries pulled for saved plans, released when
	// the reconcile ends.
	held []func()
	// closers undo what openStack and open did, last first (close).
	closers []func()
}

// close removes what the stack's opening held: the session, the inputs'
// files, the pulled source's cache hold, the source credentials.
func (sr *stackRun) close() {
	for _, release := range sr.held {
		release()
	}
	sr.held = nil
	for i := len(sr.closers) - 1; i >= 0; i-- {
		sr.closers[i]()
	}
	sr.closers = nil
}

// Why openStack failed: each caller says it in its own terms.
type (
	// sourceError: the registry, the source's credentials or the
	// controller's cache failed (a reconcile retries with backoff);
	// pull: pulling the source did.
	sourceError struct {
		err  error
		pull bool
	}
	// parseError: the stack's files are not valid HCL (the Stack stalls
	// as Invalid until its source changes).
	parseError struct {
		diags hcl.Diagnostics
		cfg   *config.Config
	}
)

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }
func (e *parseError) Error() string  { return diagText(e.diags, e.cfg) }

// openStack pulls the Stack's source (src: spec.source, or the digest
// its verification admitted) with the Stack's registry credentials,
// parses the stack's files once, and reads the Stack's inputs as its
// identity. The stack is opened by open. The one place the controller
// reads a stack: its reconciles, its Pipeline's gates and its deletion
// come through here.
//
// Errors: a *sourceError (the pull, the credentials, the cache's
// directories), a *parseError (the stack's files), else readInputs'. On
// error nothing stays held.
func (r *reconciler) openStack(ctx context.Context, st *v1alpha1.Stack, src func(artifact.Registry) (string, error)) (_ *stackRun, err error) {
	stacksDir, chartsDir, tmpDir := r.dirs()
	for _, d := range []string{stacksDir, chartsDir, tmpDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, &sourceError{err: err}
		}
	}
	sr := &stackRun{st: st, tmp: tmpDir}
	defer func() {
		if err != nil {
			sr.close()
		}
	}()
	res, creds, dropCredentials, err := r.sourceResolver(ctx, st, tmpDir)
	if err != nil {
		var ce *configError
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, &sourceError{err: err}
	}
	sr.closers = append(sr.closers, dropCredentials)
	sr.res = res
	reg := r.registry
	reg.Resolver = res
	ref, err := src(reg)
	if err != nil {
		return nil, err
	}
	pulling(ctx, ref)
	f, releaseCache, err := r.fetch(ctx, reg, creds, stacksDir, ref)
	if err != nil {
		return nil, &sourceError{err: err, pull: true}
	}
	sr.closers = append(sr.closers, releaseCache)
	sr.fetched = f
	cfg, diags := config.LoadDir(f.Dir)
	if diags.HasErrors() {
		return nil, &parseError{diags: diags, cfg: cfg}
	}
	sr.cfg = cfg
	in, err := r.readInputs(ctx, st, f.Digest, cfg.Variables, tmpDir)
	if err != nil {
		return nil, err
	}
	sr.closers = append(sr.closers, in.cleanup)
	sr.in = in
	sr.opts = r.runOptions(st, f, cfg, in)
	return sr, nil
}

// specSource is the Stack's spec.source as it is (no verification).
func specSource(st *v1alpha1.Stack) func(artifact.Registry) (string, error) {
	return func(artifact.Registry) (string, error) { return st.Spec.Source, nil }
}

// open opens the stack of sr on its run options (evaluated once, from
// the files openStack parsed). With charts, it also fills the chart cache
// with the locked charts of the pulled stack (the lock file as pushed)
// and proves, with the Stack's own credentials, that it may read those
// the cache held already (res.Access): a chart of another namespace's
// pulls is refused before anything is planned, naming the chart and the
// Stack.
func (sr *stackRun) open(ctx context.Context, charts bool) error {
	s, err := run.Open(ctx, sr.opts)
	if err != nil {
		return err
	}
	sr.closers = append(sr.closers, s.Close)
	sr.session = s
	if !charts {
		return nil
	}
	_, err = s.Init(ctx, run.InitRequest{Frozen: true, Resolver: sr.res})
	return err
}
