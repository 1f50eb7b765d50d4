package memview

import (
	"context"
	"slices"

	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/planner"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DryRun implements planner.ClusterView: the live object with the fields
// obj sets replaced by obj's (see the package's doc for what that leaves
// out).
func (v *View) DryRun(_ context.Context, obj, live *unstructured.Unstructured, ignore kube.IgnoreRules) (*unstructured.Unstructured, error) {
	if _, err := v.resource(kube.RefOf(obj)); err != nil {
		return nil, err
	}
	if live != nil {
		obj = ignore.Strip(obj)
	}
	return merged(obj, live), nil
}

// DryRunReplace implements planner.ClusterView: the CRD as given (no
// defaulting, no check of the versions its live one stores).
func (v *View) DryRunReplace(_ context.Context, crd *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if _, err := v.resource(kube.RefOf(crd)); err != nil {
		return nil, err
	}
	return crd.DeepCopy(), nil
}

// DryRunCreate implements planner.ClusterView: the fake clients' create.
func (v *View) DryRunCreate(ctx context.Context, obj *unstructured.Unstructured, namespace string) error {
	return v.kc.DryRunCreateIn(ctx, obj, namespace)
}

// Admission implements planner.ClusterView: Options.Admission.
func (v *View) Admission(context.Context) (planner.AdmissionScope, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	scope := planner.AdmissionScope{All: slices.Contains(v.admission, "*"), Groups: map[string]bool{}}
	for _, g := range v.admission {
		scope.Groups[g] = true
	}
	return scope, nil
}

// merged is obj applied over live by convoy's field manager: every field
// obj sets replaces live's, maps merged.
func merged(obj, live *unstructured.Unstructured) *unstructured.Unstructured {
	if live == nil {
		return obj.DeepCopy()
	}
	return &unstructured.Unstructured{Object: mergeInto(live.DeepCopy().Object, obj.DeepCopy().Object)}
}

// mergeInto sets every field of src in dst, merging maps.
func mergeInto(dst, src map[string]any) map[string]any {
	for k, sv := range src {
		sm, sIsMap := sv.(map[string]any)
		dm, dIsMap := dst[k].(map[string]any)
		if sIsMap && dIsMap {
			dst[k] = mergeInto(dm, sm)
			continue
		}
		dst[k] = sv
	}
	return dst
}
