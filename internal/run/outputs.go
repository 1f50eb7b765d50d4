package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/zclconf/go-cty/cty"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// resourceKey names a live object in release.X.resources
// (config.ResourceKey).
func resourceKey(ref kube.Ref) string {
	return config.ResourceKey(ref.APIVersion(), ref.Kind, ref.Name)
}

// outputsOf are the attributes of an applied release that its dependents
// may reference: its revision, status, and the live objects it created
// (as the cluster has them now, status included). Secrets are marked
// sensitive, so whatever is derived from them is masked in every output.
func outputsOf(ctx context.Context, eng *release.Engine, rel *release.Release) (config.AppliedRelease, error) {
	return OutputsFrom(ctx, eng.Renderer, rel, config.ResourceNeeds{All: true}, eng.Kube().Get)
}

// OutputsFrom is outputsOf reading the live objects needs says are read
// through get (a plan's shared lists, say), which returns nil for an
// object that is gone. The others are unknown in the value: their
// existence is the caller's to prove.
func OutputsFrom(ctx context.Context, rd *release.Renderer, rel *release.Release, needs config.ResourceNeeds, get func(context.Context, kube.Ref) (*unstructured.Unstructured, error)) (config.AppliedRelease, error) {
	out := config.AppliedRelease{Revision: rel.Version, Status: string(rel.Info.Status)}
	refs, err := recordRefs(rd, rel)
	if err != nil {
		return out, fmt.Errorf("release %s: %w", rel.Name, err)
	}
	attrs := map[string]cty.Value{}
	for _, ref := range refs {
		key := resourceKey(ref)
		if !needs.Reads(key) {
			attrs[key] = cty.DynamicVal
			continue
		}
		live, err := get(ctx, ref)
		if err == nil && live == nil {
			err = fmt.Errorf("%s: not found", ref)
		}
		if err != nil {
			return out, err
		}
		v, err := jsonValue(live.Object)
		if err != nil {
			return out, fmt.Errorf("%s: %w", ref, err)
		}
		if ref.Kind == "Secret" && ref.Group == "" {
			v = v.Mark(config.Sensitive)
		}
		attrs[key] = v
	}
	out.Resources = cty.ObjectVal(attrs)
	return out, nil
}

// recordRefs are the objects of a release's record: from the objects
// annotation convoy writes on its records, else parsed from the manifest.
func recordRefs(rd *release.Renderer, rel *release.Release) ([]kube.Ref, error) {
	if objs, ok := release.RecordObjectsOf(rel); ok {
		refs := make([]kube.Ref, len(objs))
		for i, o := range objs {
			refs[i] = o.Ref
		}
		return refs, nil
	}
	objs, err := rd.Parse(rel.Manifest, rel.Namespace)
	if err != nil {
		return nil, err
	}
	refs := make([]kube.Ref, len(objs))
	for i, o := range objs {
		refs[i] = kube.RefOf(o)
	}
	return refs, nil
}

// appliedAttributes gathers what inst's expressions may reference of its
// dependencies once they are applied: from this run's records, else from
// the dependency's deployed revision (a dependency not part of this run).
func appliedAttributes(ctx context.Context, st *config.Stack, inst *config.ReleaseInstance, applied map[string]*release.Release, cl *Clusters) (map[config.ReleaseInstanceAddr]config.AppliedRelease, error) {
	out := map[config.ReleaseInstanceAddr]config.AppliedRelease{}
	for _, d := range inst.DependsOn {
		dep := st.Release(d.Addr)
		if dep == nil {
			continue
		}
		eng, err := cl.Engine(ctx, dep.Cluster)
		if err != nil {
			return nil, err
		}
		rel := applied[d.Addr.String()]
		if rel == nil {
			rel, err = eng.Storage(dep.Namespace).Deployed(ctx, dep.Name)
			if errors.Is(err, release.ErrNoDeployed) {
				continue // stays unknown: evaluation reports what it lacks
			}
			if err != nil {
				return nil, err
			}
		}
		a, err := outputsOf(ctx, eng, rel)
		if err != nil {
			return nil, fmt.Errorf("outputs of %s: %w", d.Addr, err)
		}
		out[d.Addr] = a
	}
	return out, nil
}
