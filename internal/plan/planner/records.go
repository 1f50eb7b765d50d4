package planner

import (
	"context"
	"slices"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RecordSource returns the metadata of the release records of a namespace
// on the engine's cluster (Helm's owner=helm records; Secrets of its
// record type only): what a plan reads first of every release. Nil in
// Input: the engine lists them (release.Engine.ListRecordMeta, one list of
// metadata per namespace, page by page). A controller that keeps the
// records in a metadata informer returns its cache instead. What it
// returns is only read.
type RecordSource func(ctx context.Context, eng *release.Engine, namespace string) ([]metav1.PartialObjectMetadata, error)

// history returns a release's records as the plan's view of its cluster
// reads them (ClusterView.Records): partial, as their metadata tells them
// (release.Release.Partial: labels, annotations, revision and status; no
// chart, values or manifest), which is all the fast path needs
// (incremental.go); fullHistory reads the payloads the rest needs. A full
// refresh, and a plan that observes content (saved plans, the
// controller), which need them all, read them whole (Reads.WholeRecords).
func (c *computer) history(ctx context.Context, rd *release.Renderer, namespace, name string) ([]*release.Release, error) {
	recs, err := c.histories(ctx, rd, namespace)
	return recs[name], err
}

// histories are the records of a namespace by release name (history).
func (c *computer) histories(ctx context.Context, rd *release.Renderer, namespace string) (map[string][]*release.Release, error) {
	return c.view(rd).Records(ctx, namespace)
}

// fullHistory is history with the newest and the deployed record read
// whole (once per plan: ClusterView.Whole), as release.Engine.Histories
// returns it: what planning a release in full, an uninstall or a rename
// needs. The older records stay partial.
func (c *computer) fullHistory(ctx context.Context, rd *release.Renderer, namespace, name string) ([]*release.Release, error) {
	hist, err := c.history(ctx, rd, namespace, name)
	if err != nil || len(hist) == 0 {
		return hist, err
	}
	deployed := -1
	for i, r := range hist {
		if r.Info.Status == release.StatusDeployed {
			deployed = i
		}
	}
	out := slices.Clone(hist)
	for i, r := range hist {
		if i != len(hist)-1 && i != deployed {
			continue
		}
		full, err := c.loadRecord(ctx, rd, r)
		if err != nil {
			return nil, err
		}
		out[i] = full
	}
	return out, nil
}

// loadRecord reads the whole record of a partial release, as the plan's
// view reads it (ClusterView.Whole: once per plan, by list or GET).
func (c *computer) loadRecord(ctx context.Context, rd *release.Renderer, r *release.Release) (*release.Release, error) {
	return c.view(rd).Whole(ctx, r)
}

// predictWholeReads counts the deployed records of a namespace the plan
// will read whole (readsDeployedWhole): what the view is told
// (Reads.WholeReads) to choose between one list of the namespace's
// deployed records and a GET each.
func (c *computer) predictWholeReads(ctx context.Context, rd *release.Renderer, namespace string) (needed int, err error) {
	id := rd.ClusterID()
	hists, err := c.histories(ctx, rd, namespace)
	if err != nil {
		return 0, err
	}
	declared := map[string]bool{}
	for _, inst := range c.in.Stack.Releases {
		if inst.Namespace != namespace {
			continue
		}
		e, err := c.renderer(ctx, inst.Cluster)
		if err != nil || e.ClusterID() != id {
			continue // its own release says what is wrong
		}
		declared[inst.Name] = true
		if _, planned := c.planned[inst.Addr]; planned && c.readsDeployedWhole(ctx, inst, hists[inst.Name]) {
			needed++
		}
	}
	if len(c.in.Targets) == 0 && !c.in.Destroy {
		// Releases of the stack its files no longer declare are
		// uninstalled: their records are read whole (removed).
		for name, h := range hists {
			if declared[name] {
				continue
			}
			last := h[len(h)-1]
			if c.stackOwns(last) && last.Info.Status != release.StatusUninstalled && deployedOf(h) != nil {
				needed++
			}
		}
	}
	return needed, nil
}

// readsDeployedWhole predicts whether planning inst reads its deployed
// record whole: it is uninstalled or changed (predictChange), its record
// lacks the objects annotation, or policies read its objects
// (Input.PolicyObjects).
func (c *computer) readsDeployedWhole(ctx context.Context, inst *config.ReleaseInstance, hist []*release.Release) bool {
	deployed := deployedOf(hist)
	if deployed == nil {
		return false
	}
	if c.in.Destroy || c.in.Refresh != RefreshIncremental || c.in.Observe == ObserveContent || c.in.PolicyObjects {
		return true
	}
	if _, ok := release.RecordObjectsOf(deployed); !ok {
		return true
	}
	return c.predictChange(ctx, inst.Addr)
}

// predictChange predicts whether the plan plans the release at addr in
// full: one known now whose inputs are not those of its deployed record
// (incremental.go's inputsUnchanged, with a request resolved for the
// purpose), or that another stack owns; one whose values read outputs of
// other releases when one of those is predicted to change (it is then
// known only after apply). Whether its live objects drifted is not
// predicted. Once per release and plan.
func (c *computer) predictChange(ctx context.Context, addr config.ReleaseInstanceAddr) bool {
	changes, _ := c.predicted.Get(addr, func() (bool, error) {
		inst := c.in.Stack.Release(addr)
		if inst == nil {
			return false, nil
		}
		if !inst.Known {
			for _, d := range inst.DependsOn {
				if _, planned := c.planned[d.Addr]; planned && c.predictChange(ctx, d.Addr) {
					return true, nil
				}
			}
			return false, nil
		}
		// Errors here are the release's own plan's to report.
		rd, err := c.renderer(ctx, inst.Cluster)
		if err != nil {
			return false, nil
		}
		hist, err := c.history(ctx, rd, inst.Namespace, inst.Name)
		if err != nil {
			return false, nil
		}
		if len(hist) == 0 {
			return true, nil // an install
		}
		last, deployed := hist[len(hist)-1], deployedOf(hist)
		if owner := last.Labels[release.StackLabel]; owner != "" && !c.stackOwns(last) {
			return true, nil
		}
		r, err := resolve.Resolve(c.in.Charts, c.in.Stack.Dir, inst)
		if err != nil {
			return false, nil
		}
		return c.inputsUnchanged(rd, c.in.Request(r), last, deployed, false, false) != "", nil
	})
	return changes
}

// deployedOf is the newest deployed record of a history (nil: none).
func deployedOf(hist []*release.Release) *release.Release {
	for _, r := range slices.Backward(hist) {
		if r.Info.Status == release.StatusDeployed {
			return r
		}
	}
	return nil
}
