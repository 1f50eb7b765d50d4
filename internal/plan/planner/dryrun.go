package planner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"

	"github.com/convoy-sh/convoy/internal/plan"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// lastAppliedAnnotation is kubectl's client-side apply record: noise.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// normalize returns a copy of obj without what is never shown: status,
// managedFields and the server's bookkeeping, the last-applied annotation.
func normalize(obj *unstructured.Unstructured) map[string]any {
	if obj == nil {
		return map[string]any{}
	}
	o := obj.DeepCopy().Object
	delete(o, "status")
	if md, ok := o["metadata"].(map[string]any); ok {
		for _, k := range []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink"} {
			delete(md, k)
		}
		if a, ok := md["annotations"].(map[string]any); ok {
			delete(a, lastAppliedAnnotation)
			if len(a) == 0 {
				delete(md, "annotations")
			}
		}
	}
	return o
}

// normalizedView is normalize without the deep copy: the maps normalize
// changes are copied, everything below them is shared with obj. Only for
// reading (hashing).
func normalizedView(obj *unstructured.Unstructured) map[string]any {
	if obj == nil {
		return map[string]any{}
	}
	o := maps.Clone(obj.Object)
	delete(o, "status")
	if md, ok := o["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		o["metadata"] = md
		for _, k := range []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink"} {
			delete(md, k)
		}
		if a, ok := md["annotations"].(map[string]any); ok {
			a = maps.Clone(a)
			md["annotations"] = a
			delete(a, lastAppliedAnnotation)
			if len(a) == 0 {
				delete(md, "annotations")
			}
		}
	}
	return o
}

// ContentHash identifies an object's content without status and server
// bookkeeping: what Verify compares when the resourceVersion moved.
func ContentHash(obj *unstructured.Unstructured) string {
	b, err := json.Marshal(normalizedView(obj))
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ShapeHash identifies what apply would touch on a live object: its
// content restricted to the fields the applied object sets (lists and
// scalars whole). Fields others added since, such as a controller's
// annotation, do not change it; a changed value convoy sets does.
func ShapeHash(live *unstructured.Unstructured, applied map[string]any) string {
	b, err := json.Marshal(project(normalizedView(live), applied))
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// absentField stands for a field the applied object sets and live lacks.
const absentField = "\x00absent"

// project restricts v to the fields shape sets, a field v lacks standing
// as absentField (so that its absence counts in a hash).
func project(v, shape any) any { return projectFields(v, shape, absentField) }

// dryRunResult is the server's answer to a dry-run apply.
type dryRunResult struct {
	after *unstructured.Unstructured
	// immutable is the server's refusal to change an immutable field.
	immutable error
}

// dryRun applies obj server-side without persisting it, exactly as apply
// will: taking over the fields obj sets from other field managers, and
// leaving those ignore names to them.
// live is the object as the plan read it (nil: absent).
func (c *computer) dryRun(ctx context.Context, rd *release.Renderer, obj, live *unstructured.Unstructured, ignore kube.IgnoreRules) (dryRunResult, error) {
	c.stats.add(&c.stats.DryRuns, 1)
	after, err := c.view(rd).DryRun(ctx, obj, live, ignore)
	switch {
	case err == nil:
		return dryRunResult{after: after}, nil
	case kube.IsImmutable(err):
		return dryRunResult{immutable: err}, nil
	}
	return dryRunResult{}, err
}

// ownedByRelease reports whether a live object carries the ownership
// metadata of release name in namespace.
func ownedByRelease(live *unstructured.Unstructured, name, namespace string) bool {
	a := live.GetAnnotations()
	return a["meta.helm.sh/release-name"] == name && a["meta.helm.sh/release-namespace"] == namespace
}

// ownerRelease is the Helm release a live object's ownership annotations
// name ("" when none).
func ownerRelease(live *unstructured.Unstructured) (name, namespace string) {
	a := live.GetAnnotations()
	return a["meta.helm.sh/release-name"], a["meta.helm.sh/release-namespace"]
}

// objectChange fills the identity fields of an ObjectChange.
func objectChange(ref kube.Ref, action plan.ObjectAction) *plan.ObjectChange {
	return &plan.ObjectChange{Ref: plan.ObjectRef(ref), Action: action}
}

// secretPaths are the paths masked whatever their value.
func secretPaths(kind string) []string {
	if kind == "Secret" {
		return []string{"data", "stringData"}
	}
	return nil
}

func sameObject(a, b *unstructured.Unstructured) bool {
	return plan.EqualJSON(a.Object, b.Object)
}
