package gate

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// lastApplied is kubectl's annotation holding the whole object as last
// applied: a Secret's data, base64 encoded.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// ObjectMaps are the objects as a CEL gate reads them: each object's JSON
// map, without metadata.managedFields (noise, and the bulk of an object),
// and for Secrets without data, stringData and the last-applied
// annotation. The objects themselves are not changed.
func ObjectMaps(objs []*unstructured.Unstructured) []map[string]any {
	out := make([]map[string]any, 0, len(objs))
	for _, o := range objs {
		if o == nil {
			continue
		}
		m := maps.Clone(o.Object)
		if md, ok := m["metadata"].(map[string]any); ok {
			if _, has := md["managedFields"]; has {
				md = maps.Clone(md)
				delete(md, "managedFields")
				m["metadata"] = md
			}
		}
		out = append(out, withoutSecretData(m))
	}
	return out
}

// isSecret reports whether m is a core v1 Secret.
func isSecret(m map[string]any) bool {
	return m["kind"] == "Secret" && m["apiVersion"] == "v1"
}

// withoutSecretData is m, or for a Secret a shallow copy of it without
// what holds its values.
func withoutSecretData(m map[string]any) map[string]any {
	if !isSecret(m) {
		return m
	}
	_, d := m["data"]
	_, sd := m["stringData"]
	md, _ := m["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	_, la := ann[lastApplied]
	if !d && !sd && !la {
		return m
	}
	m = maps.Clone(m)
	delete(m, "data")
	delete(m, "stringData")
	if la {
		md, ann = maps.Clone(md), maps.Clone(ann)
		delete(ann, lastApplied)
		md["annotations"] = ann
		m["metadata"] = md
	}
	return m
}

// objectRef names an object of the objects list as every message names
// cluster objects: "apps/v1 Deployment ns/name".
func objectRef(o any) string {
	m, ok := o.(map[string]any)
	if !ok {
		return "(not an object)"
	}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	md, _ := m["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	if ns, _ := md["namespace"].(string); ns != "" {
		name = ns + "/" + name
	}
	return apiVersion + " " + kind + " " + name
}
