package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestHashesReadWithoutCopying: the hashes of a live object are those of
// its normalized copy, and computing them leaves the object (shared by the
// plan's lists) as it was.
func TestHashesReadWithoutCopying(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "ns", "uid": "u", "resourceVersion": "7",
			"annotations":   map[string]any{lastAppliedAnnotation: "{}"},
			"managedFields": []any{map[string]any{"manager": "helm"}},
		},
		"spec":   map[string]any{"replicas": int64(2), "template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}}},
		"status": map[string]any{"readyReplicas": int64(1)},
	}}
	before := obj.DeepCopy()
	b, _ := json.Marshal(normalize(obj))
	sum := sha256.Sum256(b)
	if got, want := ContentHash(obj), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("ContentHash = %s, want the hash of the normalized copy %s", got, want)
	}
	shape := map[string]any{"metadata": map[string]any{"name": "web", "annotations": map[string]any{"x": "y"}}, "spec": map[string]any{"replicas": int64(3)}}
	b, _ = json.Marshal(project(normalize(obj), shape))
	sum = sha256.Sum256(b)
	if got, want := ShapeHash(obj, shape), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("ShapeHash = %s, want %s", got, want)
	}
	if !reflect.DeepEqual(obj.Object, before.Object) {
		t.Errorf("hashing changed the object:\n%v\nwas\n%v", obj.Object, before.Object)
	}
}
