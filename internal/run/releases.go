package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
)

// ReleaseStatus is one release of the stack and its newest record (nil:
// not installed).
type ReleaseStatus struct {
	Instance *config.ReleaseInstance
	Last     *Revision
}

// StatusRequest says which releases to show.
type StatusRequest struct {
	// Selectors (-l) limit the releases to those whose labels match; none:
	// every release.
	Selectors []string
}

// Status reads the newest record of every release of the stack (or of the
// selected ones), in dependency order.
func (s *Session) Status(ctx context.Context, req StatusRequest) ([]ReleaseStatus, error) {
	ls, o, cl, err := s.connected(ctx)
	if err != nil {
		return nil, err
	}
	order := ls.Order
	if len(req.Selectors) > 0 {
		sel, diags := ls.Stack.Select(req.Selectors)
		if err := diagError(diags, ls.Config); err != nil {
			return nil, err
		}
		order = slices.DeleteFunc(slices.Clone(order), func(a config.ReleaseInstanceAddr) bool { return !slices.Contains(sel, a) })
	}
	out := make([]ReleaseStatus, len(order))
	errs := make([]error, len(order))
	err = forEach(ctx, o.parallelism(), len(order), func(i int) {
		inst := ls.Stack.Release(order[i])
		out[i].Instance = inst
		eng, err := cl.Engine(ctx, inst.Cluster)
		if err != nil {
			errs[i] = err
			return
		}
		last, err := eng.Storage(inst.Namespace).Last(ctx, inst.Name)
		switch {
		case errors.Is(err, release.ErrReleaseNotFound):
		case err != nil:
			errs[i] = err
		default:
			rev := revisionOf(last)
			out[i].Last = &rev
		}
	})
	if err := firstError(errs, err); err != nil {
		return nil, err
	}
	return out, nil
}

// firstError is the first non-nil of errs, else err: one failure per
// run, not the same unreachable cluster once per release.
func firstError(errs []error, err error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return err
}

// oneRelease is one release of the stack (named by address or Helm
// release name), connected: the stack, the operation's options and
// connections, and the engine of the release's cluster.
type oneRelease struct {
	ls   *Loaded
	o    Options
	cl   *Clusters
	inst *config.ReleaseInstance
	eng  *release.Engine
}

// release connects to the cluster of one release of the stack (named by
// address or Helm release name).
func (s *Session) release(ctx context.Context, name string) (*oneRelease, error) {
	ls, o, cl, err := s.connected(ctx)
	if err != nil {
		return nil, err
	}
	inst, err := ls.FindRelease(name)
	if err != nil {
		return nil, err
	}
	eng, err := cl.Engine(ctx, inst.Cluster)
	if err != nil {
		return nil, err
	}
	return &oneRelease{ls: ls, o: o, cl: cl, inst: inst, eng: eng}, nil
}

// ownedRelease is the release a single-release command changes, while
// onOwnRelease holds the stack's lock for it.
type ownedRelease struct {
	ls    *Loaded
	inst  *config.ReleaseInstance
	eng   *release.Engine
	runID string // the lock's id: the release.RunLabel of records written
}

// onOwnRelease runs work on one release of the stack (named by address or
// Helm release name) as rollback, recover and records migrate do: it
// takes the stack's lock (held by command), fences ctx with it, checks
// that the release is the stack's (ownRelease; heal marks a revision an
// interrupted run left pending failed first), runs work, and releases the
// lock, a loss of it heading the error. inst is the release once the lock
// is taken (nil before), also with an error.
func (s *Session) onOwnRelease(ctx context.Context, name, command string, heal bool, work func(ctx context.Context, r ownedRelease) error) (inst *config.ReleaseInstance, err error) {
	one, err := s.release(ctx, name)
	if err != nil {
		return nil, err
	}
	ls, o, inst, eng := one.ls, one.o, one.inst, one.eng
	lock, err := lockStack(ctx, o, ls.Stack, one.cl, command)
	if err != nil {
		return nil, err
	}
	defer func() { err = lock.finish(ctx, err) }()
	ctx, stopFence := lock.fence(ctx)
	defer stopFence()
	if err := ownRelease(ctx, o, ls.Stack.ID(), inst, eng, lock, heal); err != nil {
		return inst, err
	}
	return inst, work(ctx, ownedRelease{ls: ls, inst: inst, eng: eng, runID: lock.runID})
}

// ownRelease checks, holding the stack lock, that the release's newest
// record is the stack's (or no stack's) before a single-release command
// changes it. A record left pending by a run of the stack that is gone is
// marked failed first (when heal), as apply does.
func ownRelease(ctx context.Context, o Options, stack string, inst *config.ReleaseInstance, eng *release.Engine, lock *stackLock, heal bool) error {
	last, err := eng.Storage(inst.Namespace).Last(ctx, inst.Name)
	if errors.Is(err, release.ErrReleaseNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if owner := last.Labels[release.StackLabel]; owner != "" && owner != stack {
		return fmt.Errorf("release %s (namespace %s) is owned by stack %q (revision %d): stack %q leaves it alone", inst.Name, inst.Namespace, owner, last.Version, stack)
	}
	run := last.Labels[release.RunLabel]
	if !heal || !last.Info.Status.IsPending() || run == "" || run == lock.runID || last.Labels[release.StackLabel] != stack {
		return nil
	}
	if _, err := eng.RecoverInterrupted(ctx, inst.Name, inst.Namespace, last.Version, run, lock.runID); err != nil {
		return err
	}
	o.announce(fmt.Sprintf("%s: revision %d, left %s by interrupted run %s, is now failed", inst.Addr, last.Version, last.Info.Status, run))
	return nil
}

// History returns a release's records, oldest first.
func (s *Session) History(ctx context.Context, name string) (*config.ReleaseInstance, []Revision, error) {
	one, err := s.release(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	inst, eng := one.inst, one.eng
	h, err := eng.Storage(inst.Namespace).History(ctx, inst.Name)
	if err != nil {
		return nil, nil, err
	}
	if len(h) == 0 {
		return nil, nil, fmt.Errorf("release %s (namespace %s): %w", inst.Name, inst.Namespace, release.ErrReleaseNotFound)
	}
	revs := make([]Revision, len(h))
	for i, r := range h {
		revs[i] = revisionOf(r)
	}
	return inst, revs, nil
}

// RollbackRequest says which release to roll back, to what, and how,
// where the command line overrides the release's own settings (as helm
// rollback's flags).
type RollbackRequest struct {
	// Release is an address or a Helm release name.
	Release string
	// Revision to restore; 0: the one before the newest.
	Revision int
	// Timeout bounds each wait; 0: the release's timeout.
	Timeout time.Duration
	// Wait overrides the release's wait and wait_for_jobs.
	Wait WaitOverride
	// CleanupOnFail and NoHooks turn on cleanup_on_fail and
	// disable_hooks for this rollback; false leaves the release's.
	CleanupOnFail, NoHooks bool
	// HistoryMax overrides the release's history_max (nil: its own).
	HistoryMax *int
	// Description replaces "Rollback to N" in the new revision's record.
	Description string
}

// WaitOverride is what a command line says of a release's wait.
type WaitOverride int

// Wait overrides.
const (
	// WaitAsRelease keeps the release's wait and wait_for_jobs.
	WaitAsRelease WaitOverride = iota
	// WaitOff does not wait (helm --wait=hookOnly).
	WaitOff
	// WaitOn waits for the objects to be ready (helm --wait).
	WaitOn
	// WaitOnWithJobs also waits for Jobs to complete (--wait --wait-for-jobs).
	WaitOnWithJobs
	// WaitJobsIfWaiting keeps the release's wait, and when it waits,
	// waits for Jobs too (--wait-for-jobs alone).
	WaitJobsIfWaiting
)

func (w WaitOverride) mode(own release.WaitMode) release.WaitMode {
	switch w {
	case WaitOff:
		return release.WaitNone
	case WaitOn:
		return release.WaitReady
	case WaitOnWithJobs:
		return release.WaitReadyAndJobs
	case WaitJobsIfWaiting:
		if own != release.WaitNone {
			return release.WaitReadyAndJobs
		}
	}
	return own
}

// Rollback restores an earlier revision of a release as a new revision,
// with the release's wait and timeout settings unless req overrides them,
// holding the stack lock.
//
// The release must be the stack's: one whose newest record another stack
// wrote is refused. The revision written is returned also with an error
// (its record could not be finished, or the lock not released).
func (s *Session) Rollback(ctx context.Context, req RollbackRequest) (inst *config.ReleaseInstance, rev *Revision, err error) {
	inst, err = s.onOwnRelease(ctx, req.Release, "convoy rollback", true, func(ctx context.Context, r ownedRelease) error {
		inst := r.inst
		wait := req.Wait.mode(waitMode(inst))
		red := sensitive.New(resolve.SensitiveValues(inst))
		historyMax := inst.HistoryMax
		if req.HistoryMax != nil {
			historyMax = *req.HistoryMax
		}
		rel, err := r.eng.Rollback(ctx, release.RollbackRequest{
			Name: inst.Name, Namespace: inst.Namespace, Revision: req.Revision,
			Wait: wait, Timeout: cmp.Or(req.Timeout, inst.Timeout), DisableHooks: inst.DisableHooks || req.NoHooks,
			CleanupOnFail: inst.CleanupOnFail || req.CleanupOnFail, HistoryMax: historyMax, RunID: r.runID,
			IgnoreChanges: ignoreRules(inst.IgnoreChanges), Description: req.Description,
			Redact: red, Health: r.ls.rollbackHealth(inst),
		})
		if rel != nil {
			r := revisionOf(rel)
			rev = &r
		}
		return red.Err(err)
	})
	return inst, rev, err
}

// Recover marks a release's pending revision failed, holding the stack
// lock (so no run of this stack is writing it). A release another stack
// owns is refused.
func (s *Session) Recover(ctx context.Context, name string) (inst *config.ReleaseInstance, rev *Revision, err error) {
	inst, err = s.onOwnRelease(ctx, name, "convoy recover", false, func(ctx context.Context, r ownedRelease) error {
		rel, err := r.eng.Recover(ctx, r.inst.Name, r.inst.Namespace)
		if err != nil {
			return err
		}
		rr := revisionOf(rel)
		rev = &rr
		return nil
	})
	return inst, rev, err
}

// Unlocked says what ForceUnlock found on one cluster.
type Unlocked struct {
	Stack   string
	Cluster Connected
	// Holder held the lock ("": the stack was not locked there).
	Holder string
}

// ForceUnlock removes the stack's lock on every cluster it uses, whoever
// holds it; with a lockID (the id a locked run's error names), only a lock
// with that id: another run's is left alone, and is an error. Unless
// forced, a lock whose holder's process is running on this host is left
// alone too (a *stacklock.LiveHolderError).
func (s *Session) ForceUnlock(ctx context.Context, lockID string, force bool) ([]Unlocked, error) {
	ls := s.ls
	clusters, err := s.o.newClusters(nil).Stack(ctx, ls.Stack)
	if err != nil {
		return nil, err
	}
	var out []Unlocked
	for _, c := range clusters {
		holder, err := stacklock.ForceUnlock(ctx, c.Engine.LockClient(), ls.Stack.ID(), lockID, force)
		if err != nil {
			return out, err
		}
		out = append(out, Unlocked{Stack: ls.Stack.Name, Cluster: c, Holder: holder})
	}
	return out, nil
}

// Revision is one record of a release, as people read it.
type Revision struct {
	Version     int
	Updated     time.Time
	Status      string
	Chart       string // name-version
	AppVersion  string
	Description string
	// RollbackRevision is the revision a rollback restored; 0 otherwise.
	RollbackRevision int
}

func revisionOf(r *release.Release) Revision {
	rev := Revision{Version: r.Version, Updated: r.Info.LastDeployed, Status: string(r.Info.Status), Description: r.Info.Description, RollbackRevision: r.Info.RollbackRevision}
	if r.Chart != nil && r.Chart.Metadata != nil {
		rev.Chart = r.Chart.Metadata.Name + "-" + r.Chart.Metadata.Version
		rev.AppVersion = r.Chart.Metadata.AppVersion
	}
	return rev
}

// LogEvents reports the release engines' steps as timestamped lines on w.
func LogEvents(w io.Writer) func(release.Event) {
	var mu sync.Mutex
	return func(ev release.Event) {
		mu.Lock()
		defer mu.Unlock()
		release.WriteEvent(w, ev)
	}
}

// Client rate limits, as kube's defaults.
const (
	DefaultQPS   = kube.DefaultQPS
	DefaultBurst = kube.DefaultBurst
)

// DefaultUnreachable is how long an API server may not answer before a run
// gives up on it (ClusterOptions.Unreachable).
const DefaultUnreachable = kube.DefaultUnreachable
