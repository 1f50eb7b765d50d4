package release

import (
	"encoding/base64"
	"reflect"
	"sync"

	"github.com/convoy-sh/convoy/internal/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A chart that keeps a generated value through lookup (reuse the live
// Secret, else generate) generates it anew at every call while the Secret
// does not exist: on install, `include "secret.yaml" | sha256sum` in a pod
// template is the checksum of another password than the Secret created, and
// the next rendering, which finds the Secret, changes the pod template (with
// Helm, the first upgrade rolls the pods). So a rendering whose lookups
// missed objects it renders itself is rendered again with those lookups
// answered by the objects as the revision creates them: what the next plan
// will find. The second rendering is kept only when it renders each of those
// objects exactly as it was answered with (the chart reused what it looked
// up); a chart that renders an object only when lookup misses it, or that
// generates a value whatever it finds, keeps its first rendering, as Helm's.

// lookupKey is the object a named lookup asked for.
type lookupKey struct{ apiVersion, kind, namespace, name string }

// missRecorder wraps a lookup and records the named lookups that found
// nothing.
type missRecorder struct {
	next   chart.LookupFunc
	mu     sync.Mutex
	missed []lookupKey
}

func (m *missRecorder) lookup(apiVersion, kind, namespace, name string) (map[string]any, error) {
	got, err := m.next(apiVersion, kind, namespace, name)
	if err == nil && len(got) == 0 && name != "" {
		m.mu.Lock()
		m.missed = append(m.missed, lookupKey{apiVersion, kind, namespace, name})
		m.mu.Unlock()
	}
	return got, err
}

// ownObjects are the objects a rendering creates (its manifests, not its
// hooks, which may be deleted after they run) that the lookups in missed
// asked for, as the API server would return them. Manifests whose kinds the
// cluster does not serve yet are skipped.
func (e *Renderer) ownObjects(r *chart.Rendered, namespace string, missed []lookupKey) map[lookupKey]*unstructured.Unstructured {
	objs := e.parseManifests(r, namespace)
	out := map[lookupKey]*unstructured.Unstructured{}
	for _, k := range missed {
		if o := findObject(objs, k); o != nil {
			out[k] = o
		}
	}
	return out
}

func (e *Renderer) parseManifests(r *chart.Rendered, namespace string) []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	for _, m := range r.Manifests {
		got, err := e.kube.Parse(m.Document(), namespace)
		if err != nil {
			continue
		}
		objs = append(objs, got...)
	}
	return objs
}

// findObject is the object a lookup asks for: a cluster-scoped object
// (no namespace once parsed) whatever namespace the lookup names.
func findObject(objs []*unstructured.Unstructured, k lookupKey) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetAPIVersion() == k.apiVersion && o.GetKind() == k.kind && o.GetName() == k.name &&
			(o.GetNamespace() == "" || o.GetNamespace() == k.namespace) {
			return o
		}
	}
	return nil
}

// withOwnObjects answers lookups of own with those objects as stored,
// and every other lookup from next.
func withOwnObjects(next chart.LookupFunc, own map[lookupKey]*unstructured.Unstructured) chart.LookupFunc {
	return func(apiVersion, kind, namespace, name string) (map[string]any, error) {
		if o, ok := own[lookupKey{apiVersion, kind, namespace, name}]; ok {
			return asStored(o).Object, nil
		}
		return next(apiVersion, kind, namespace, name)
	}
}

// reproduces reports whether r renders each object of own as it is.
func (e *Renderer) reproduces(r *chart.Rendered, namespace string, own map[lookupKey]*unstructured.Unstructured) bool {
	objs := e.parseManifests(r, namespace)
	for k, o := range own {
		again := findObject(objs, k)
		if again == nil || !reflect.DeepEqual(asStored(again).Object, asStored(o).Object) {
			return false
		}
	}
	return true
}

// asStored is a copy of obj as the API server stores it, in what templates
// read: a Secret's stringData is folded into data, base64-encoded.
func asStored(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	if out.GetAPIVersion() != "v1" || out.GetKind() != "Secret" {
		return out
	}
	sd, ok := out.Object["stringData"].(map[string]any)
	if !ok {
		return out
	}
	data, _ := out.Object["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	out.Object["data"] = data
	delete(out.Object, "stringData")
	return out
}
