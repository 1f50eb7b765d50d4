package run

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/hashicorp/hcl/v2"
)

// TestRequest says which releases' tests to run.
type TestRequest struct {
	// Releases are addresses or Helm release names; Selectors (-l) add
	// the releases whose labels match; neither: every release.
	Releases  []string
	Selectors []string
	// Timeout bounds each test's wait (helm test --timeout); 0: each
	// release's own timeout.
	Timeout time.Duration
	// Only and Skip choose tests by name (helm test --filter name=... and
	// '!name=...'); none: every test.
	Only, Skip []string
	// Logs reads the logs of every test's pods, not only of a failed
	// test's (helm test --logs).
	Logs bool
}

// Tested is one release's test run: the result, or why its tests could
// not run (Err: not installed, unreachable cluster).
type Tested struct {
	Instance *config.ReleaseInstance
	Result   *release.TestResult
	Err      error
}

// Failed reports whether the release's tests did not all pass.
func (t Tested) Failed() bool { return t.Err != nil || t.Result == nil || t.Result.Err != nil }

// Test runs the test hooks of releases (helm test), at most o.Parallelism
// releases at once, holding the stack's lock (the runs are recorded in the
// releases' records). Results are in the stack's order.
func (s *Session) Test(ctx context.Context, req TestRequest) (_ []Tested, err error) {
	ls, o, cl, err := s.connected(ctx)
	if err != nil {
		return nil, err
	}
	var insts []*config.ReleaseInstance
	var selected []config.ReleaseInstanceAddr
	if len(req.Selectors) > 0 {
		var diags hcl.Diagnostics
		selected, diags = ls.Stack.Select(req.Selectors)
		if err := diagError(diags, ls.Config); err != nil {
			return nil, err
		}
	}
	for _, addr := range ls.Order {
		if len(req.Releases) == 0 && len(req.Selectors) == 0 || slices.Contains(selected, addr) {
			insts = append(insts, ls.Stack.Release(addr))
		}
	}
	for _, n := range req.Releases {
		inst, err := ls.FindRelease(n)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(insts, inst) {
			insts = append(insts, inst)
		}
	}
	lock, err := lockStack(ctx, o, ls.Stack, cl, "convoy test")
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, lock.release(ctx)) }()
	out := make([]Tested, len(insts))
	err = forEach(ctx, o.parallelism(), len(insts), func(i int) {
		inst := insts[i]
		out[i].Instance = inst
		eng, err := cl.Engine(ctx, inst.Cluster)
		if err != nil {
			out[i].Err = err
			return
		}
		out[i].Result, out[i].Err = eng.Test(ctx, release.TestRequest{
			Name: inst.Name, Namespace: inst.Namespace, Timeout: cmp.Or(req.Timeout, inst.Timeout),
			Only: req.Only, Skip: req.Skip, Logs: req.Logs,
		})
	})
	return out, err
}
