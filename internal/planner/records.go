package planner

import (
	"context"
	"slices"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/resolve"
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

// history returns a release's records as their metadata tells them
// (release.Release.Partial: labels, annotations, revision and status; no
// chart, values or manifest), listing each namespace once. That is all the
// fast path needs (incremental.go); fullHistory reads the payloads the
// rest needs. A full refresh, and a plan that observes content (saved
// plans, the controller), which need them all, list the records whole
// instead (release.Engine.Histories) unless Input.Records is set.
func (c *computer) history(ctx context.Context, eng *release.Engine, namespace, name string) ([]*release.Release, error) {
	recs, err := c.histories(ctx, eng, namespace)
	return recs[name], err
}

// histories are the records of a namespace by release name (history).
func (c *computer) histories(ctx context.Context, eng *release.Engine, namespace string) (map[string][]*release.Release, error) {
	return c.nsHistories.Get(nsKey{eng.Kube().ClusterID(), namespace}, func() (map[string][]*release.Release, error) {
		var recs map[string][]*release.Release
		err := c.do(ctx, func() error {
			if (c.in.Refresh == RefreshFull || c.in.Observe == ObserveContent) && c.in.Records == nil {
				// Every release is planned in full, or its manifest is
				// parsed for what the plan observes (ObserveContent): one
				// list of the records whole beats a GET per release.
				var err error
				recs, err = c.viewOf(eng).Histories(ctx, namespace)
				c.stats.add(&c.stats.RecordLists, 1)
				return err
			}
			list := c.in.Records
			if list == nil {
				list = func(ctx context.Context, eng *release.Engine, namespace string) ([]metav1.PartialObjectMetadata, error) {
					return c.viewOf(eng).RecordMeta(ctx, namespace)
				}
			}
			items, err := list(ctx, eng, namespace)
			if err != nil {
				return err
			}
			c.stats.add(&c.stats.RecordLists, 1)
			recs, err = c.viewOf(eng).HistoriesOfMeta(ctx, namespace, items)
			return err
		})
		if err == nil {
			c.prefetchApplied(ctx, eng, namespace, recs)
		}
		return recs, err
	})
}

// fullHistory is history with the newest and the deployed record read
// whole (one GET each, once per plan), as release.Engine.Histories
// returns it: what planning a release in full, an uninstall or a rename
// needs. The older records stay partial.
func (c *computer) fullHistory(ctx context.Context, eng *release.Engine, namespace, name string) ([]*release.Release, error) {
	hist, err := c.history(ctx, eng, namespace, name)
	if err != nil || len(hist) == 0 {
		return hist, err
	}
	return c.fullHistories.Get(recordsKey{nsKey{eng.Kube().ClusterID(), namespace}, name}, func() ([]*release.Release, error) {
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
			full, err := c.loadRecord(ctx, eng, r)
			if err != nil {
				return nil, err
			}
			out[i] = full
		}
		return out, nil
	})
}

// loadRecord reads the whole record of a partial release (once per plan):
// from the list of its namespace's deployed records when the plan reads
// them by list (byList), else with a GET.
func (c *computer) loadRecord(ctx context.Context, eng *release.Engine, r *release.Release) (*release.Release, error) {
	if !r.Partial() {
		return r, nil
	}
	return c.records.Get(revisionKey{nsKey{eng.Kube().ClusterID(), r.Namespace}, r.Name, r.Version}, func() (*release.Release, error) {
		if r.Info.Status == release.StatusDeployed {
			if full, ok, err := c.listedRecord(ctx, eng, r); ok || err != nil {
				return full, err
			}
		}
		var full *release.Release
		err := c.do(ctx, func() error {
			var err error
			full, err = c.viewOf(eng).LoadRecord(ctx, r)
			return err
		})
		if err == nil {
			c.stats.add(&c.stats.RecordReads, 1)
		}
		return full, err
	})
}

// recordsKey is a release of a namespace.
type recordsKey struct {
	nsKey
	name string
}

// Records read by list (issue 26). A plan reads the deployed records of a
// namespace with one list (release.Engine.ListDeployedRecords) instead of
// a GET each when it predicts that it reads at least listRecordsMin of
// them whole, and at least 1/listRecordsShare of the namespace's deployed
// records. A list carries every deployed record of the namespace (each
// holds its chart), a GET one: measured on the devcluster with records of
// about 8 KB, a GET costs about 1.3 ms and a list about 1 ms plus 0.3 ms
// per record it carries, so a list pays once it replaces a quarter of the
// records it carries; one record needed is one GET whatever the
// namespace holds. The prediction (readsDeployedWhole) is a pure
// function of the stack, the records' metadata and the plan's inputs, so
// the choice does not depend on the order releases are planned in; a
// release it misses (one whose live objects drifted, say) is still read,
// from the list when its namespace was listed, else with a GET. What the
// plan holds does not depend on the choice: both read the same objects
// and decode them the same way. docs/performance.md has the measurement.
const (
	listRecordsMin   = 2
	listRecordsShare = 4
)

// readByList is the rule: list a namespace's deployed records when the
// plan reads needed of the deployed records it holds whole.
func readByList(needed, deployed int) bool {
	return needed >= listRecordsMin && needed*listRecordsShare >= deployed
}

// listedRecord is r's whole record from the list of its namespace's
// deployed records, when the plan reads that namespace's records by list
// (false otherwise, or when the list does not hold r).
func (c *computer) listedRecord(ctx context.Context, eng *release.Engine, r *release.Release) (*release.Release, bool, error) {
	key := nsKey{eng.Kube().ClusterID(), r.Namespace}
	byList, err := c.byList.Get(key, func() (bool, error) {
		needed, deployed, err := c.predictWholeReads(ctx, eng, r.Namespace)
		return readByList(needed, deployed), err
	})
	if err != nil || !byList {
		return nil, false, err
	}
	listed, err := c.listed.Get(key, func() (*release.DeployedRecords, error) {
		var l *release.DeployedRecords
		err := c.do(ctx, func() error {
			var err error
			l, err = c.viewOf(eng).DeployedRecords(ctx, r.Namespace)
			return err
		})
		if err == nil {
			// A list that replaces GETs counts as a record list.
			c.stats.add(&c.stats.RecordLists, 1)
		}
		return l, err
	})
	if err != nil {
		return nil, false, err
	}
	return listed.Load(r)
}

// predictWholeReads counts the deployed records of a namespace the plan
// will read whole (readsDeployedWhole), and the deployed records the
// namespace holds (what its list would carry).
func (c *computer) predictWholeReads(ctx context.Context, eng *release.Engine, namespace string) (needed, deployed int, err error) {
	id := eng.Kube().ClusterID()
	hists, err := c.histories(ctx, eng, namespace)
	if err != nil {
		return 0, 0, err
	}
	for _, h := range hists {
		for _, r := range h {
			if r.Info.Status == release.StatusDeployed {
				deployed++
			}
		}
	}
	declared := map[string]bool{}
	for _, inst := range c.in.Stack.Releases {
		if inst.Namespace != namespace {
			continue
		}
		e, err := c.engine(ctx, inst.Cluster)
		if err != nil || e.Kube().ClusterID() != id {
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
			if last.Labels[release.StackLabel] == c.in.Stack.ID() && last.Info.Status != release.StatusUninstalled && deployedOf(h) != nil {
				needed++
			}
		}
	}
	return needed, deployed, nil
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
		eng, err := c.engine(ctx, inst.Cluster)
		if err != nil {
			return false, nil
		}
		hist, err := c.history(ctx, eng, inst.Namespace, inst.Name)
		if err != nil {
			return false, nil
		}
		if len(hist) == 0 {
			return true, nil // an install
		}
		last, deployed := hist[len(hist)-1], deployedOf(hist)
		if owner := last.Labels[release.StackLabel]; owner != "" && owner != c.in.Stack.ID() {
			return true, nil
		}
		r, err := resolve.Resolve(c.in.Charts, c.in.Stack.Dir, inst)
		if err != nil {
			return false, nil
		}
		return c.inputsUnchanged(eng, c.in.Request(r), last, deployed, false, false) != "", nil
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
