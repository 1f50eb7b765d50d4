package plan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// contentHash identifies an object's content without status and server
// bookkeeping: what Verify compares when the resourceVersion moved.
func ContentHash(obj *unstructured.Unstructured) string {
	b, err := json.Marshal(normalize(obj))
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// shapeHash identifies what apply would touch on a live object: its
// content restricted to the fields the applied object sets (lists and
// scalars whole). Fields others added since, such as a controller's
// annotation, do not change it; a changed value convoy sets does.
func ShapeHash(live *unstructured.Unstructured, applied map[string]any) string {
	b, err := json.Marshal(project(normalize(live), applied))
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return ShapePrefix + hex.EncodeToString(sum[:])
}

// ShapePrefix marks hashes made by shapeHash (others are contentHash).
const ShapePrefix = "shape:"

// absentField stands for a field the applied object sets and live lacks.
const absentField = "\x00absent"

func project(v, shape any) any {
	sm, isMap := shape.(map[string]any)
	vm, vIsMap := v.(map[string]any)
	if !isMap || !vIsMap {
		return v
	}
	out := make(map[string]any, len(sm))
	for k, sub := range sm {
		if lv, ok := vm[k]; ok {
			out[k] = project(lv, sub)
		} else {
			out[k] = absentField
		}
	}
	return out
}

// dryRunResult is the server's answer to a dry-run apply.
type dryRunResult struct {
	after *unstructured.Unstructured
	// conflict is a field-manager conflict apply would fail on (the result
	// was then computed with force).
	conflict error
	// immutable is the server's refusal to change an immutable field.
	immutable error
}

// dryRun applies obj server-side without persisting it. A field-manager
// conflict that apply would not resolve by itself is retried with force, so
// that the result is still known, and reported.
func dryRun(ctx context.Context, kc *kube.Client, obj *unstructured.Unstructured, force bool) (dryRunResult, error) {
	res, err := kc.Apply(ctx, []*unstructured.Unstructured{obj}, kube.ApplyOptions{DryRun: kube.DryRunServer, Force: force})
	if err == nil {
		return dryRunResult{after: res[0].Live}, nil
	}
	if isImmutable(err) {
		return dryRunResult{immutable: err}, nil
	}
	if !apierrors.IsConflict(err) {
		return dryRunResult{}, err
	}
	var out dryRunResult
	if !release.OnlyReleaseToolConflicts(err) {
		out.conflict = err
	}
	res, err = kc.Apply(ctx, []*unstructured.Unstructured{obj}, kube.ApplyOptions{DryRun: kube.DryRunServer, Force: true})
	if err != nil {
		if isImmutable(err) {
			return dryRunResult{immutable: err}, nil
		}
		return dryRunResult{}, err
	}
	out.after = res[0].Live
	return out, nil
}

// isImmutable recognises the API server's refusals to change a field that
// cannot change (a Deployment's selector, a Job's template, a Service's
// clusterIP): the object must be replaced.
func isImmutable(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "field is immutable") || strings.Contains(msg, "may not change once set") || strings.Contains(msg, "is immutable")
}

// conflictNote says how apply deals with a field-manager conflict.
func conflictNote(err error, force bool) string {
	managers := conflictManagers(err)
	if force {
		return fmt.Sprintf("fields owned by %s are taken over (--force-conflicts)", managers)
	}
	return fmt.Sprintf("fields are owned by %s: apply fails with a conflict unless --force-conflicts is given", managers)
}

func conflictManagers(err error) string {
	var se *apierrors.StatusError
	var ms []string
	if errors.As(err, &se) && se.ErrStatus.Details != nil {
		for _, c := range se.ErrStatus.Details.Causes {
			if c.Type != metav1.CauseTypeFieldManagerConflict {
				continue
			}
			_, rest, _ := strings.Cut(c.Message, `conflict with "`)
			m, _, _ := strings.Cut(rest, `"`)
			if one := fmt.Sprintf("%q (%s)", m, c.Field); m != "" && !slices.Contains(ms, one) {
				ms = append(ms, one)
			}
		}
	}
	if len(ms) == 0 {
		return "another field manager"
	}
	return "field manager " + strings.Join(ms, ", ")
}

// ownedByRelease reports whether a live object carries the ownership
// metadata of release name in namespace.
func ownedByRelease(live *unstructured.Unstructured, name, namespace string) bool {
	a := live.GetAnnotations()
	return a["meta.helm.sh/release-name"] == name && a["meta.helm.sh/release-namespace"] == namespace
}

// objectChange fills the identity fields of an ObjectChange.
func objectChange(ref kube.Ref, action ObjectAction) *ObjectChange {
	return &ObjectChange{Ref: ref.String(), APIVersion: ref.APIVersion(), Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, Action: action}
}

// secretPaths are the paths masked whatever their value.
func secretPaths(kind string) []string {
	if kind == "Secret" {
		return []string{"data", "stringData"}
	}
	return nil
}

func sameObject(a, b *unstructured.Unstructured) bool {
	return equalJSON(a.Object, b.Object)
}
