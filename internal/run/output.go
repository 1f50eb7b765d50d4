package run

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// ReleaseOutput is what dependents of a release may reference of it
// (release.NAME.revision, .status, .resources["KEY"]), from its deployed
// revision. Deployed is false when no revision is deployed: then a
// reference to it is known only after apply.
type ReleaseOutput struct {
	Instance *config.ReleaseInstance
	Deployed bool
	Revision int
	Status   string
	// Resources are the keys of the resources attribute (resourceKey:
	// "apiVersion/Kind/name"), sorted.
	Resources []string
}

// outputOn is Session.Output of a loaded stack on the clusters cl connects.
func outputOn(ctx context.Context, o Options, ls *Loaded, cl *Clusters, names []string) ([]ReleaseOutput, error) {
	if err := ls.keepMovedNames(ctx, cl); err != nil {
		return nil, err
	}
	var insts []*config.ReleaseInstance
	if len(names) == 0 {
		for _, addr := range ls.Order {
			insts = append(insts, ls.Stack.Release(addr))
		}
	}
	for _, n := range names {
		inst, err := ls.FindRelease(n)
		if err != nil {
			return nil, err
		}
		insts = append(insts, inst)
	}
	out := make([]ReleaseOutput, len(insts))
	errs := make([]error, len(insts))
	err := forEach(ctx, o.parallelism(), len(insts), func(i int) {
		out[i], errs[i] = outputOf(ctx, cl, insts[i])
	})
	if err := firstError(errs, err); err != nil {
		return nil, err
	}
	return out, nil
}

func outputOf(ctx context.Context, cl *Clusters, inst *config.ReleaseInstance) (ReleaseOutput, error) {
	out := ReleaseOutput{Instance: inst}
	eng, err := cl.Engine(ctx, inst.Cluster)
	if err != nil {
		return out, err
	}
	rel, err := eng.Storage(inst.Namespace).Deployed(ctx, inst.Name)
	switch {
	case errors.Is(err, release.ErrNoDeployed), errors.Is(err, release.ErrReleaseNotFound):
		return out, nil
	case err != nil:
		return out, err
	}
	objs, err := eng.Kube().Parse(rel.Manifest, rel.Namespace)
	if err != nil {
		return out, fmt.Errorf("release %s: %w", rel.Name, err)
	}
	out.Deployed, out.Revision, out.Status = true, rel.Version, string(rel.Info.Status)
	out.Resources = []string{}
	for _, o := range objs {
		out.Resources = append(out.Resources, resourceKey(kube.RefOf(o)))
	}
	slices.Sort(out.Resources)
	out.Resources = slices.Compact(out.Resources)
	return out, nil
}
