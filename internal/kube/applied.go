package kube

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// AppliedState identifies what the client's field manager owns of objects
// as the cluster holds them: per object its identity, uid and the field
// set of the manager's apply entry. Changing a field the manager set moves
// it to another manager (an update takes the fields it changes; an apply
// that changes them must force), deleting and recreating an object changes
// its uid, and status writes and other managers' fields leave it as it is.
// So the state taken right after an apply, compared with the state now,
// says whether anyone touched what that apply set. A nil object (absent)
// counts as such. The result is 40 hex digits, fit for a label value.
func (c *Client) AppliedState(refs []Ref, objs []*unstructured.Unstructured) string {
	type entry struct {
		id, uid, fields string
	}
	entries := make([]entry, len(refs))
	for i, ref := range refs {
		e := entry{id: ref.Group + "/" + ref.Kind + "/" + ref.Namespace + "/" + ref.Name, uid: "absent"}
		if o := objs[i]; o != nil {
			e.uid = string(o.GetUID())
			for _, mf := range o.GetManagedFields() {
				if mf.Manager == c.fieldManager && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "" && mf.FieldsV1 != nil {
					e.fields += mf.APIVersion + "\x00" + string(mf.FieldsV1.Raw)
				}
			}
		}
		entries[i] = e
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.id, b.id) })
	h := sha256.New()
	for _, e := range entries {
		h.Write([]byte(e.id + "\x00" + e.uid + "\x00" + e.fields + "\x01"))
	}
	return hex.EncodeToString(h.Sum(nil))[:40]
}
