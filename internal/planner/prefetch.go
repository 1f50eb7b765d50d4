package planner

import (
	"context"
	"maps"
	"slices"

	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/release"
)

// prefetchLists is how many metadata lists prefetchApplied has in flight
// at once, besides the pool's.
const prefetchLists = 8

// prefetchApplied starts, in the background, the metadata lists
// (liveApplied) of every kind and namespace the deployed records of this
// stack's releases in namespace hold objects of, once its records are
// read. Releases otherwise ask for a list when the first of them needs
// it, holding a slot of the pool meanwhile, so the lists of a large
// stack were spread over the whole plan (at 10,000 releases, from the
// first second to the last) and releases queued behind them. Each list
// is still made once: a release that needs one in flight waits for it.
// Not for plans that read records whole or observe content (they read
// full objects), nor when the lists come from a cache (the controller's
// informers).
func (c *computer) prefetchApplied(ctx context.Context, eng *release.Engine, namespace string, recs map[string][]*release.Release) {
	if c.in.Refresh == RefreshFull || c.in.Observe == ObserveContent || c.in.Destroy || eng.Metadata() != nil {
		return
	}
	ours := c.stackReleases()
	kc := eng.Kube()
	seen := map[kindKey]bool{}
	var refs []kube.Ref
	for _, name := range slices.Sorted(maps.Keys(recs)) {
		if !ours[namespace+"/"+name] {
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
				continue // cluster-scoped, or a GET (liveApplied)
			}
			key := kindKey{nsKey{kc.ClusterID(), o.Ref.Namespace}, o.Ref.APIVersion(), o.Ref.Kind}
			if !seen[key] {
				seen[key] = true
				refs = append(refs, o.Ref)
			}
		}
	}
	c.viewOf(eng).Prefetch(ctx, refs)
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
