package planner

import (
	"context"

	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// storedAPIsOf are the removed API versions a stored revision names that
// the engine read as their successors, as the plan says them.
func storedAPIsOf(s []release.StoredAPI) []plan.StoredAPI {
	var out []plan.StoredAPI
	for _, a := range s {
		out = append(out, plan.StoredAPI{Revision: a.Revision, FromAPIVersion: a.From.APIVersion, Kind: a.From.Kind, ToAPIVersion: a.To.APIVersion, RemovedIn: a.RemovedIn.String()})
	}
	return out
}

// deprecations checks the objects a release applies (its hooks' too)
// against the API map of its cluster's engine, for the target Kubernetes
// release: Input.KubeVersion, else the cluster's own. Objects it deletes
// are left out: nothing applies them again.
func (c *computer) deprecations(ctx context.Context, inst *config.ReleaseInstance, rc *plan.ReleaseChange) error {
	if rc.Action == plan.ActionUninstall || rc.Action == plan.ActionForget {
		return nil
	}
	rd, err := c.renderer(ctx, inst.Cluster)
	if err != nil {
		return err
	}
	target := c.in.KubeVersion
	if target.IsZero() {
		caps := rd.Capabilities()
		if caps == nil {
			return nil
		}
		if target, err = apimap.ParseVersion(caps.KubeVersion.Version); err != nil {
			return nil // a server version convoy cannot read: nothing to check against
		}
	}
	rc.KubeTarget = target.String()
	apis := rd.APIs()
	if known := apis.KnownThrough(); !known.IsZero() && known.Less(target) {
		rc.KubeKnown = known.String()
	}
	seen := map[plan.ObjectRef]bool{}
	check := func(ref plan.ObjectRef) {
		if seen[ref] {
			return
		}
		seen[ref] = true
		e, ok := apis.Deprecated(apimap.API{APIVersion: ref.APIVersion(), Kind: ref.Kind}, target)
		if !ok {
			return
		}
		rc.Deprecations = append(rc.Deprecations, plan.Deprecation{Ref: ref, DeprecatedIn: e.DeprecatedIn.String(), RemovedIn: e.RemovedIn.String(), Removed: e.RemovedBy(target), Replacement: e.Replacement()})
	}
	for _, o := range rc.Objects {
		if o.Action != plan.ObjectDelete {
			check(o.Ref)
		}
	}
	for _, h := range plan.HookObjects(rc.Hooks) {
		check(h.Ref)
	}
	return nil
}
