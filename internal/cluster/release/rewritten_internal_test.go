package release

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A record's managedFields as the API server keeps them: convoy's create
// owns the payload and the objects annotation; an edit by another manager
// takes the payload (Release.Rewritten), a relabel takes labels only.
func TestPayloadRewrittenFromManagedFields(t *testing.T) {
	entry := func(manager, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
	}
	created := entry("convoy", `{"f:data":{".":{},"f:release":{}},"f:metadata":{"f:annotations":{".":{},"f:convoy.dev/objects":{}},"f:labels":{".":{},"f:name":{},"f:owner":{}}},"f:type":{}}`)
	createdLabels := entry("convoy", `{"f:metadata":{"f:annotations":{".":{},"f:convoy.dev/objects":{}},"f:labels":{".":{},"f:name":{}}},"f:type":{}}`)
	edited := entry("kubectl-edit", `{"f:data":{"f:release":{}}}`)
	relabel := entry("helm", `{"f:metadata":{"f:labels":{"f:convoy.dev/fingerprint":{}}}}`)
	helmWrote := entry("helm", `{"f:data":{".":{},"f:release":{}},"f:metadata":{"f:labels":{".":{},"f:name":{}}},"f:type":{}}`)
	for _, tt := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    bool
	}{
		{"written by convoy", []metav1.ManagedFieldsEntry{created}, false},
		{"relabelled by another manager", []metav1.ManagedFieldsEntry{created, relabel}, false},
		{"payload edited by kubectl", []metav1.ManagedFieldsEntry{createdLabels, edited}, true},
		{"written by helm, no objects annotation", []metav1.ManagedFieldsEntry{helmWrote}, false},
		{"managedFields dropped", nil, false},
	} {
		if got := payloadRewritten(tt.entries); got != tt.want {
			t.Errorf("%s: rewritten %v, want %v", tt.name, got, tt.want)
		}
		if got := payloadRewritten(recordWriters(tt.entries)); got != tt.want {
			t.Errorf("%s, as kept in a list (recordWriters): rewritten %v, want %v", tt.name, got, tt.want)
		}
	}
}

// BenchmarkRecordWritersOfAListedRecord is what a plan adds per record of
// a metadata list to tell a rewritten payload: its managedFields (a
// create by convoy with a dozen labels, a relabel) reduced, then read.
func BenchmarkRecordWritersOfAListedRecord(b *testing.B) {
	created := metav1.ManagedFieldsEntry{Manager: "convoy", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(
		`{"f:data":{".":{},"f:release":{}},"f:metadata":{"f:annotations":{".":{},"f:convoy.dev/objects":{}},"f:labels":{".":{},"f:convoy.dev/address":{},"f:convoy.dev/applied":{},"f:convoy.dev/fingerprint":{},"f:convoy.dev/run":{},"f:convoy.dev/stack":{},"f:createdAt":{},"f:modifiedAt":{},"f:name":{},"f:owner":{},"f:status":{},"f:version":{}}},"f:type":{}}`)}}
	relabel := metav1.ManagedFieldsEntry{Manager: "convoy", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:convoy.dev/applied":{},"f:convoy.dev/fingerprint":{}}}}`)}}
	entries := []metav1.ManagedFieldsEntry{created, relabel}
	b.ReportAllocs()
	for b.Loop() {
		if payloadRewritten(recordWriters(entries)) {
			b.Fatal("rewritten")
		}
	}
}
