package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/release"
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
func Status(ctx context.Context, o Options, req StatusRequest) ([]ReleaseStatus, error) {
	ls, err := Load(ctx, o.Source, Ordered)
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
	cl := NewClusters(o.Clusters)
	var out []ReleaseStatus
	for _, addr := range order {
		inst := ls.Stack.Release(addr)
		eng, err := cl.Engine(ctx, inst.Cluster)
		if err != nil {
			return nil, err
		}
		last, err := eng.Storage(inst.Namespace).Last(ctx, inst.Name)
		switch {
		case errors.Is(err, release.ErrReleaseNotFound):
			out = append(out, ReleaseStatus{Instance: inst})
		case err != nil:
			return nil, err
		default:
			rev := revisionOf(last)
			out = append(out, ReleaseStatus{Instance: inst, Last: &rev})
		}
	}
	return out, nil
}

// oneRelease loads the stack and connects to the cluster of one of its
// releases (named by address or Helm release name).
func oneRelease(ctx context.Context, o Options, name string) (*Loaded, *config.ReleaseInstance, *Clusters, *release.Engine, error) {
	ls, err := Load(ctx, o.Source, Ordered)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	inst, err := ls.FindRelease(name)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	cl := NewClusters(o.Clusters)
	eng, err := cl.Engine(ctx, inst.Cluster)
	return ls, inst, cl, eng, err
}

// History returns a release's records, oldest first.
func History(ctx context.Context, o Options, name string) (*config.ReleaseInstance, []Revision, error) {
	_, inst, _, eng, err := oneRelease(ctx, o, name)
	if err != nil {
		return nil, nil, err
	}
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

// Rollback restores an earlier revision of a release (0: the previous
// one) as a new revision, with the release's wait and timeout settings,
// holding the stack lock.
func Rollback(ctx context.Context, o Options, name string, revision int) (*config.ReleaseInstance, *Revision, error) {
	ls, inst, cl, eng, err := oneRelease(ctx, o, name)
	if err != nil {
		return nil, nil, err
	}
	unlock, err := lockStack(ctx, ls.Stack, cl, "convoy rollback")
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	rel, err := eng.Rollback(ctx, release.RollbackRequest{
		Name: inst.Name, Namespace: inst.Namespace, Revision: revision,
		Wait: waitMode(inst), Timeout: inst.Timeout, DisableHooks: inst.DisableHooks,
		CleanupOnFail: inst.CleanupOnFail, HistoryMax: inst.HistoryMax,
		IgnoreChanges: ignoreRules(inst.IgnoreChanges),
	})
	if err != nil {
		return inst, nil, err
	}
	rev := revisionOf(rel)
	return inst, &rev, nil
}

// Recover marks a release's pending revision failed, holding the stack
// lock (so no run of this stack is writing it).
func Recover(ctx context.Context, o Options, name string) (*config.ReleaseInstance, *Revision, error) {
	ls, inst, cl, eng, err := oneRelease(ctx, o, name)
	if err != nil {
		return nil, nil, err
	}
	unlock, err := lockStack(ctx, ls.Stack, cl, "convoy recover")
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	rel, err := eng.Recover(ctx, inst.Name, inst.Namespace)
	if err != nil {
		return inst, nil, err
	}
	rev := revisionOf(rel)
	return inst, &rev, nil
}

// Unlocked says what ForceUnlock found on one cluster.
type Unlocked struct {
	Stack   string
	Cluster Connected
	// Holder held the lock ("": the stack was not locked there).
	Holder string
}

// ForceUnlock removes the stack's lock on every cluster it uses, whoever
// holds it.
func ForceUnlock(ctx context.Context, o Options) ([]Unlocked, error) {
	ls, err := Load(ctx, o.Source, Evaluated)
	if err != nil {
		return nil, err
	}
	clusters, err := NewClusters(o.Clusters).Stack(ctx, ls.Stack)
	if err != nil {
		return nil, err
	}
	var out []Unlocked
	for _, c := range clusters {
		holder, err := ForceUnlockClient(ctx, c.Engine.Client(), ls.Stack.ID())
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
}

func revisionOf(r *release.Release) Revision {
	rev := Revision{Version: r.Version, Updated: r.Info.LastDeployed, Status: string(r.Info.Status), Description: r.Info.Description}
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
