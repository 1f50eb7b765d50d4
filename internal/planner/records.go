package planner

import (
	"context"
	"slices"

	"github.com/convoy-sh/convoy/internal/release"
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
	recs, err := c.histories.Get(nsKey{eng.Kube().ClusterID(), namespace}, func() (map[string][]*release.Release, error) {
		var recs map[string][]*release.Release
		err := c.do(ctx, func() error {
			if (c.in.Refresh == RefreshFull || c.in.Observe == ObserveContent) && c.in.Records == nil {
				// Every release is planned in full, or its manifest is
				// parsed for what the plan observes (ObserveContent): one
				// list of the records whole beats a GET per release.
				var err error
				recs, err = eng.Histories(ctx, namespace)
				c.stats.add(&c.stats.RecordLists, 1)
				return err
			}
			list := c.in.Records
			if list == nil {
				list = func(ctx context.Context, eng *release.Engine, namespace string) ([]metav1.PartialObjectMetadata, error) {
					return eng.ListRecordMeta(ctx, namespace)
				}
			}
			items, err := list(ctx, eng, namespace)
			if err != nil {
				return err
			}
			c.stats.add(&c.stats.RecordLists, 1)
			recs, err = eng.HistoriesOfMeta(ctx, namespace, items)
			return err
		})
		return recs, err
	})
	return recs[name], err
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

// loadRecord reads the whole record of a partial release (once per plan).
func (c *computer) loadRecord(ctx context.Context, eng *release.Engine, r *release.Release) (*release.Release, error) {
	if !r.Partial() {
		return r, nil
	}
	return c.records.Get(revisionKey{nsKey{eng.Kube().ClusterID(), r.Namespace}, r.Name, r.Version}, func() (*release.Release, error) {
		var full *release.Release
		err := c.do(ctx, func() error {
			var err error
			full, err = eng.LoadRecord(ctx, r)
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
