package planner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// claimExpansions are the live claims of rc's StatefulSets smaller than
// their volumeClaimTemplates entry asks (expand_claims): each must have a
// StorageClass that allows volume expansion, or the plan fails naming the
// claim and its class.
func (c *computer) claimExpansions(ctx context.Context, rd *release.Renderer, rc *plan.ReleaseChange) ([]plan.ClaimExpansion, error) {
	var out []plan.ClaimExpansion
	lists := map[string][]*unstructured.Unstructured{}
	classes := map[string]*unstructured.Unstructured{}
	for _, o := range rc.Objects {
		if o.Ref.Group != "apps" || o.Ref.Kind != "StatefulSet" || o.After == nil || o.Action == plan.ObjectNoOp || o.Action == plan.ObjectDelete {
			continue
		}
		templates, _, _ := unstructured.NestedSlice(o.After, "spec", "volumeClaimTemplates")
		for _, t := range templates {
			tm, _ := t.(map[string]any)
			name, _, _ := unstructured.NestedString(tm, "metadata", "name")
			want, ok := storageOf(tm)
			if name == "" || !ok {
				continue
			}
			pvcs, listed := lists[o.Ref.Namespace]
			if !listed {
				c.stats.add(&c.stats.Lists, 1)
				var err error
				if pvcs, err = c.view(rd).Claims(ctx, o.Ref.Namespace); err != nil {
					return nil, fmt.Errorf("list the claims of %s: %w", o.Ref, err)
				}
				lists[o.Ref.Namespace] = pvcs
			}
			for _, pvc := range pvcs {
				rest, ok := strings.CutPrefix(pvc.GetName(), name+"-"+o.Ref.Name+"-")
				if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" {
					continue
				}
				have, ok := storageOf(pvc.Object)
				if !ok || want.Cmp(have) <= 0 {
					continue
				}
				ref := kube.RefOf(pvc)
				class, _, _ := unstructured.NestedString(pvc.Object, "spec", "storageClassName")
				if class == "" {
					return nil, fmt.Errorf("%s: expand_claims cannot resize it from %s to %s: it has no storage class", ref, have.String(), want.String())
				}
				sc, seen := classes[class]
				if !seen {
					var err error
					sc, err = c.view(rd).Get(ctx, kube.Ref{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass", Name: class})
					if err != nil {
						return nil, fmt.Errorf("%s: read its storage class: %w", ref, err)
					}
					classes[class] = sc
				}
				if allowed, _, _ := unstructured.NestedBool(objectOf(sc), "allowVolumeExpansion"); !allowed {
					why := "does not allow volume expansion (allowVolumeExpansion is not true)"
					if sc == nil {
						why = "does not exist"
					}
					return nil, fmt.Errorf("%s: expand_claims cannot resize it from %s to %s: its StorageClass %s %s", ref, have.String(), want.String(), class, why)
				}
				out = append(out, plan.ClaimExpansion{Ref: plan.ObjectRef(ref), StatefulSet: o.Ref, StorageClass: class, From: have.String(), To: want.String()})
			}
		}
	}
	slices.SortFunc(out, func(a, b plan.ClaimExpansion) int { return strings.Compare(a.Ref.String(), b.Ref.String()) })
	return out, nil
}

// storageOf is a claim's (or claim template's) storage request.
func storageOf(obj map[string]any) (resource.Quantity, bool) {
	s, found, _ := unstructured.NestedFieldNoCopy(obj, "spec", "resources", "requests", "storage")
	if !found {
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(fmt.Sprint(s))
	return q, err == nil
}

func objectOf(u *unstructured.Unstructured) map[string]any {
	if u == nil {
		return nil
	}
	return u.Object
}
