package kube

import (
	"encoding/json"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FieldOwner is one entry of an object's managedFields: a field manager,
// the operation it wrote with (Apply for server-side apply, Update for
// everything else) and the subresource it wrote through ("scale").
type FieldOwner struct {
	Manager     string
	Operation   metav1.ManagedFieldsOperationType
	Subresource string
}

// String names the owner as the API server's conflict messages do:
// `"kubectl"`, `"kubectl" with subresource "scale"`.
func (o FieldOwner) String() string {
	s := `"` + o.Manager + `"`
	if o.Subresource != "" {
		s += ` with subresource "` + o.Subresource + `"`
	}
	return s
}

func ownerOf(mf metav1.ManagedFieldsEntry) FieldOwner {
	return FieldOwner{Manager: mf.Manager, Operation: mf.Operation, Subresource: mf.Subresource}
}

// OwnersOf lists the managers of obj (its managedFields) that own the field
// at p, a field below it, or the whole of a field above it (an atomic list
// or map), each once, in managedFields order (most recent first).
func OwnersOf(obj *unstructured.Unstructured, p Pointer) []FieldOwner {
	var out []FieldOwner
	for _, mf := range obj.GetManagedFields() {
		if mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if json.Unmarshal(mf.FieldsV1.Raw, &fields) != nil {
			continue
		}
		if o := ownerOf(mf); covers(fields, obj.Object, p) && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// covers reports whether fields (a fieldsV1 set over value) names the field
// at p, a field below it, or an atomic field containing it.
func covers(fields map[string]any, value any, p Pointer) bool {
	if len(p) == 0 {
		return true
	}
	tok := p[0]
	var sub any
	var child any
	switch v := value.(type) {
	case map[string]any:
		s, ok := fields["f:"+tok]
		if !ok {
			return false
		}
		sub, child = s, v[tok]
	case []any:
		i, ok := index(tok, len(v))
		if !ok {
			return false
		}
		found := false
		for key, s := range fields {
			if j, ok := memberIndex(v, key); ok && j == i {
				sub, child, found = s, v[i], true
				break
			}
		}
		if !found {
			return false
		}
	default:
		return false
	}
	subFields, _ := sub.(map[string]any)
	if len(subFields) == 0 {
		return true // owned whole (a leaf of the set)
	}
	return covers(subFields, child, p[1:])
}
