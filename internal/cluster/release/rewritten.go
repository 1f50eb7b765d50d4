package release

import (
	"bytes"
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
		p, o := ownsOfRecord(mf)
		if p {
			payload = append(payload, mf.Manager)
		}
		if o {
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

var (
	payloadKey = []byte(`"f:release"`)
	objectsKey = []byte(`"f:` + ObjectsAnnotation + `"`)
)

// ownsOfRecord says whether a managedFields entry of a record owns its
// payload (data.release) and its ObjectsAnnotation. An entry naming
// neither key is not decoded (most: status writes, relabels).
func ownsOfRecord(mf metav1.ManagedFieldsEntry) (payload, objects bool) {
	if mf.FieldsV1 == nil || mf.Subresource != "" {
		return false, false
	}
	raw := mf.FieldsV1.Raw
	// What recordWriters kept of an entry: known without decoding.
	switch {
	case bytes.Equal(raw, keptPayloadObjects):
		return true, true
	case bytes.Equal(raw, keptPayload):
		return true, false
	case bytes.Equal(raw, keptObjects):
		return false, true
	}
	if !bytes.Contains(raw, payloadKey) && !bytes.Contains(raw, objectsKey) {
		return false, false
	}
	var f recordFields
	if json.Unmarshal(raw, &f) != nil {
		return false, false
	}
	_, payload = f.Data["f:release"]
	_, objects = f.Metadata.Annotations["f:"+ObjectsAnnotation]
	return payload, objects
}

// The fields recordWriters keeps of an entry.
var (
	keptPayload        = []byte(`{"f:data":{"f:release":{}}}`)
	keptObjects        = []byte(`{"f:metadata":{"f:annotations":{"f:` + ObjectsAnnotation + `":{}}}}`)
	keptPayloadObjects = []byte(`{"f:data":{"f:release":{}},"f:metadata":{"f:annotations":{"f:` + ObjectsAnnotation + `":{}}}}`)
)

// recordWriters are the managedFields entries of a record that
// payloadRewritten reads, each reduced to what it owns of the payload and
// the objects annotation; the rest (most of a record's metadata) is
// dropped.
func recordWriters(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, mf := range entries {
		var raw []byte
		switch p, o := ownsOfRecord(mf); {
		case p && o:
			raw = keptPayloadObjects
		case p:
			raw = keptPayload
		case o:
			raw = keptObjects
		default:
			continue
		}
		out = append(out, metav1.ManagedFieldsEntry{Manager: mf.Manager, Operation: mf.Operation, FieldsType: mf.FieldsType, FieldsV1: &metav1.FieldsV1{Raw: raw}})
	}
	return out
}

// RecordWriters is what the metadata of a deployed release record (labels
// owner=helm, status=deployed) keeps of its managedFields in a list or a
// cache of metadata (kube.Informers.Keep): who wrote its payload and its
// objects annotation. Nothing for other objects and other records.
func RecordWriters(m *metav1.PartialObjectMetadata) []metav1.ManagedFieldsEntry {
	if m.Labels["owner"] != "helm" || m.Labels["status"] != string(StatusDeployed) {
		return nil // only a deployed record is proven unchanged from its labels
	}
	return recordWriters(m.ManagedFields)
}
