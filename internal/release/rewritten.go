package release

import (
	"encoding/json"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RecordFieldManager is the field manager convoy writes release records
// as (the convoy binary's default one, made explicit so that a test
// binary or a renamed binary writes as convoy too).
const RecordFieldManager = "convoy"

// Rewritten reports whether the record's payload (its manifest, values,
// chart) was written by another field manager after convoy wrote it with
// its ObjectsAnnotation: edited in place by kubectl, by a script, by
// helm-mapkubeapis run over it. What convoy's labels and annotations say
// of the payload (its fingerprint, its objects and their API versions)
// may then be false, so a plan does not prove the release unchanged from
// them: it reads the record whole. Told from the record's managedFields,
// which a list of metadata returns: nothing is decoded.
func (r *Release) Rewritten() bool { return r.rewritten }

// recordFields is what a managedFields entry of a record owns of its
// payload and of its objects annotation: Secrets and ConfigMaps both keep
// the payload in data.release.
type recordFields struct {
	Data     map[string]json.RawMessage `json:"f:data"`
	Metadata struct {
		Annotations map[string]json.RawMessage `json:"f:annotations"`
	} `json:"f:metadata"`
}

// payloadRewritten reports, from a record's managedFields, whether the
// manager that last wrote its payload is not the one that wrote its
// ObjectsAnnotation (an Update moves the fields it changes to its
// manager; unchanged ones stay with theirs). Unknown (no entry owns
// either: managedFields dropped) is false.
func payloadRewritten(entries []metav1.ManagedFieldsEntry) bool {
	var payload, objects []string
	for _, mf := range entries {
		if mf.FieldsV1 == nil || mf.Subresource != "" {
			continue
		}
		var f recordFields
		if json.Unmarshal(mf.FieldsV1.Raw, &f) != nil {
			continue
		}
		if _, ok := f.Data["f:release"]; ok {
			payload = append(payload, mf.Manager)
		}
		if _, ok := f.Metadata.Annotations["f:"+ObjectsAnnotation]; ok {
			objects = append(objects, mf.Manager)
		}
	}
	if len(payload) == 0 || len(objects) == 0 {
		return false
	}
	for _, m := range payload {
		if slices.Contains(objects, m) {
			return false
		}
	}
	return true
}

// recordWriters are the managedFields entries of a record that
// payloadRewritten reads, each reduced to what it owns of the payload and
// the objects annotation; the rest (most of a record's metadata) is
// dropped.
func recordWriters(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, mf := range entries {
		if mf.FieldsV1 == nil || mf.Subresource != "" {
			continue
		}
		var f recordFields
		if json.Unmarshal(mf.FieldsV1.Raw, &f) != nil {
			continue
		}
		keep := map[string]any{}
		if _, ok := f.Data["f:release"]; ok {
			keep["f:data"] = map[string]any{"f:release": map[string]any{}}
		}
		if _, ok := f.Metadata.Annotations["f:"+ObjectsAnnotation]; ok {
			keep["f:metadata"] = map[string]any{"f:annotations": map[string]any{"f:" + ObjectsAnnotation: map[string]any{}}}
		}
		if len(keep) == 0 {
			continue
		}
		raw, _ := json.Marshal(keep)
		out = append(out, metav1.ManagedFieldsEntry{Manager: mf.Manager, Operation: mf.Operation, FieldsType: mf.FieldsType, FieldsV1: &metav1.FieldsV1{Raw: raw}})
	}
	return out
}

// RecordWriters is what the metadata of a release record (label
// owner=helm) keeps of its managedFields in a cache of metadata
// (kube.Informers.Keep): who wrote its payload and its objects annotation.
// Nothing for other objects.
func RecordWriters(m *metav1.PartialObjectMetadata) []metav1.ManagedFieldsEntry {
	if m.Labels["owner"] != "helm" {
		return nil
	}
	return recordWriters(m.ManagedFields)
}
