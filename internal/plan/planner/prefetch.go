package planner

import (
	"context"
	"maps"
	"slices"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// prefetchLists is how many metadata lists prefetchApplied has in flight
// at once, besides the pool's.
const prefetchLists = 8

// prefetchApplied starts, in the background, the metadata lists
// (Applied) of every kind and namespace the deployed records of the
// stack's releases in namespace hold objects of, once its records are
// read (recs). Releases otherwise ask for a list when the first of them
// needs it, holding a slot of the pool meanwhile, so the lists of a large
// stack were spread over the whole plan (at 10,000 releases, from the
// first second to the last) and releases queued behind them. Each list
// is still made once: a release that needs one in flight waits for it.
// Only for plans that read those lists (Reads.AppliedLists: not those
// that read records whole or observe content, which read full objects),
// and not when the lists come from a cache (the controller's informers).
func (v *engineView) prefetchApplied(ctx context.Context, namespace string, recs map[string][]*release.Release) {
	if !v.reads.AppliedLists || v.reads.Declared == nil || v.eng.Metadata() != nil {
		return
	}
	kc := v.eng.Kube()
	seen := map[kindKey]bool{}
	var refs []kube.Ref
	for _, name := range slices.Sorted(maps.Keys(recs)) {
		if !v.reads.Declared(namespace, name) {
			continue
		}
		deployed := deployedOf(recs[name])
		if deployed == nil {
			continue
		}
		objs, ok := release.RecordObjectsOf(deployed)
		if !ok {
			continue
		}
		for _, o := range objs {
			if o.Ref.Namespace == "" {
				continue // cluster-scoped, or a GET (Applied)
			}
			key := kindKey{nsKey{kc.ClusterID(), o.Ref.Namespace}, o.Ref.APIVersion(), o.Ref.Kind}
			if !seen[key] {
				seen[key] = true
				refs = append(refs, o.Ref)
			}
		}
	}
	v.readAhead(ctx, refs)
}

// readAhead starts the metadata lists (Applied) of the kinds and
// namespaces of refs in the background, at most cap(v.prefetch) at once.
func (v *engineView) readAhead(ctx context.Context, refs []kube.Ref) {
	for _, ref := range refs {
		go func() {
			select {
			case v.prefetch <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-v.prefetch }()
			// Its error, if any, is kept for the release that needs it.
			_, _ = v.Applied(ctx, ref)
		}()
	}
}

// engineRecords are a cluster's release records as its engine reads them
// (RecordStore); source, when not nil, lists their metadata instead
// (Input.Records).
type engineRecords struct {
	eng    *release.Engine
	source RecordSource
}

func (e engineRecords) Histories(ctx context.Context, namespace string) (map[string][]*release.Release, error) {
	return e.eng.Histories(ctx, namespace)
}

func (e engineRecords) RecordMeta(ctx context.Context, namespace string) ([]metav1.PartialObjectMetadata, error) {
	if e.source != nil {
		return e.source(ctx, e.eng, namespace)
	}
	return e.eng.ListRecordMeta(ctx, namespace)
}

func (e engineRecords) HistoriesOfMeta(ctx context.Context, namespace string, items []metav1.PartialObjectMetadata) (map[string][]*release.Release, error) {
	return e.eng.HistoriesOfMeta(ctx, namespace, items)
}

func (e engineRecords) LoadRecord(ctx context.Context, r *release.Release) (*release.Release, error) {
	return e.eng.LoadRecord(ctx, r)
}

func (e engineRecords) DeployedRecords(ctx context.Context, namespace string) (*release.DeployedRecords, error) {
	return e.eng.ListDeployedRecords(ctx, namespace)
}

func (e engineRecords) Labelled(ctx context.Context, selector map[string]string, except ...string) ([]release.RecordKey, error) {
	return e.eng.Labelled(ctx, selector, except...)
}

// stackReleases are the stack's release instances as "namespace/name".
func (c *computer) stackReleases() map[string]bool {
	c.oursOnce.Do(func() {
		c.ours = make(map[string]bool, len(c.in.Stack.Releases))
		for _, inst := range c.in.Stack.Releases {
			c.ours[inst.Namespace+"/"+inst.Name] = true
		}
	})
	return c.ours
}
