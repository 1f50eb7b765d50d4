package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// inherit makes the fields the client's predecessors own on live its own,
// as Helm and kubectl upgrade client-side field management: their field
// sets are merged into the client's Apply entry and their entries removed,
// by a JSON patch that fails if live changed meanwhile. Without it a field
// a predecessor wrote would stay co-owned, and never be removed when the
// release stops setting it. It returns the patched object, or live when
// there is nothing to inherit.
func (c *Client) inherit(ctx context.Context, res dynamic.ResourceInterface, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	entries := live.GetManagedFields()
	self := func(mf metav1.ManagedFieldsEntry) bool {
		return mf.Manager == c.fieldManager && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == ""
	}
	predecessor := func(mf metav1.ManagedFieldsEntry) bool { return !self(mf) && c.IsOwn(ownerOf(mf)) }
	first := slices.IndexFunc(entries, predecessor)
	if first < 0 {
		return live, nil
	}
	at := slices.IndexFunc(entries, self)
	var target metav1.ManagedFieldsEntry
	if at >= 0 {
		target = *entries[at].DeepCopy()
	} else {
		at = first
		target = *entries[first].DeepCopy()
		target.Manager, target.Operation = c.fieldManager, metav1.ManagedFieldsOperationApply
	}
	set, err := fieldSet(target)
	if err != nil {
		return nil, err
	}
	for _, mf := range entries {
		if predecessor(mf) && mf.APIVersion == target.APIVersion {
			s, err := fieldSet(mf)
			if err != nil {
				return nil, err
			}
			set = set.Union(s)
		}
	}
	raw, err := set.ToJSON()
	if err != nil {
		return nil, err
	}
	target.FieldsType, target.FieldsV1 = "FieldsV1", &metav1.FieldsV1{Raw: raw}

	var merged []metav1.ManagedFieldsEntry
	for i, mf := range entries {
		switch {
		case i == at:
			merged = append(merged, target)
		case self(mf) || predecessor(mf):
		default:
			merged = append(merged, mf)
		}
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/managedFields", "value": merged},
		// The resourceVersion makes the patch fail with a conflict if
		// the object changed since it was read.
		{"op": "replace", "path": "/metadata/resourceVersion", "value": live.GetResourceVersion()},
	})
	if err != nil {
		return nil, err
	}
	return res.Patch(ctx, live.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: c.fieldManager})
}

func fieldSet(mf metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	if mf.FieldsV1 == nil {
		return set, nil
	}
	if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
		return nil, err
	}
	return set, nil
}
