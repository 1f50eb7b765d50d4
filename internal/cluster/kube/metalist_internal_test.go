package kube

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// protobufListOf finds the list in what the API server's protobuf
// serializer writes, and refuses everything else without panicking, so
// that the serializer decodes it as before.
func TestProtobufListOf(t *testing.T) {
	list := &metav1.PartialObjectMetadataList{
		TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next"},
		Items: []metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{
			Name: "a", Namespace: "ns", UID: "u1", Labels: map[string]string{"owner": "helm"},
			Annotations:   map[string]string{"k": "v"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "convoy", Operation: "Apply", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{}}`)}}},
		}}},
	}
	pb := protobuf.NewSerializer(metainternalversionscheme.Scheme, metainternalversionscheme.Scheme)
	var encoded bytes.Buffer
	if err := pb.Encode(list, &encoded); err != nil {
		t.Fatal(err)
	}
	raw, ok := protobufListOf(encoded.Bytes())
	if !ok {
		t.Fatal("a protobuf PartialObjectMetadataList was not found")
	}
	var got metav1.PartialObjectMetadataList
	if err := got.Unmarshal(raw); err != nil {
		t.Fatal(err)
	}
	want := list.DeepCopy()
	want.TypeMeta = metav1.TypeMeta{}
	if !reflect.DeepEqual(&got, want) {
		t.Fatalf("decoded %+v, want %+v", got, want)
	}

	// Not this path: JSON, another kind, anything cut short.
	js, _ := json.Marshal(list)
	status := &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: "Failure", Code: 404}
	var other bytes.Buffer
	if err := pb.Encode(status, &other); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"json":        js,
		"status":      other.Bytes(),
		"empty":       nil,
		"magic only":  []byte("k8s\x00"),
		"cut short":   encoded.Bytes()[:len(encoded.Bytes())/2],
		"a bad tag":   append([]byte("k8s\x00"), 0xff, 0xff, 0xff),
		"not a bytes": append([]byte("k8s\x00"), 0x08, 0x01),
	} {
		if _, ok := protobufListOf(data); ok {
			t.Errorf("%s: taken for a PartialObjectMetadataList", name)
		}
	}
}

// appliedOfList reads from a protobuf list what AppliedOf reads from the
// decoded list, for every object: the entries of other managers, of
// other operations, of subresources and without a field set are not the
// manager's apply; its entries of two apiVersions are both kept.
func TestAppliedOfListAsDecoded(t *testing.T) {
	fields := func(s string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(s)} }
	now := metav1.Now()
	list := &metav1.PartialObjectMetadataList{
		ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next-page", RemainingItemCount: new(int64)},
		Items: []metav1.PartialObjectMetadata{
			{ObjectMeta: metav1.ObjectMeta{
				Name: "web", Namespace: "ns", UID: "u1", ResourceVersion: "7", Generation: 3,
				Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"meta.helm.sh/release-name": "web"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u0"}},
				Finalizers:      []string{"f"}, CreationTimestamp: now, DeletionTimestamp: &now,
				ManagedFields: []metav1.ManagedFieldsEntry{
					{Manager: "kube-controller-manager", Operation: "Update", APIVersion: "apps/v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: fields(`{"f:status":{}}`)},
					{Manager: "helm", Operation: "Apply", APIVersion: "apps/v1", Time: &now, FieldsType: "FieldsV1", FieldsV1: fields(`{"f:spec":{"f:replicas":{}}}`)},
					{Manager: "helm", Operation: "Apply", APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: fields(`{"f:status":{}}`), Subresource: "status"},
					{Manager: "helm", Operation: "Update", APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: fields(`{"f:metadata":{}}`)},
					{Manager: "helm", Operation: "Apply", APIVersion: "apps/v1beta2", FieldsType: "FieldsV1", FieldsV1: fields(`{"f:spec":{}}`)},
					{Manager: "helm", Operation: "Apply", APIVersion: "apps/v1"},
				},
			}},
			{ObjectMeta: metav1.ObjectMeta{Name: "plain", UID: "u2", ResourceVersion: "8"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "huge-generation", UID: "u3", ResourceVersion: "9", Generation: 1 << 62,
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "helm", Operation: "Apply", FieldsV1: &metav1.FieldsV1{}}}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "negative", Generation: -1}},
		},
	}
	raw, err := list.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, manager := range []string{"helm", "kube-controller-manager", "nobody"} {
		got := map[string]*Applied{}
		cont, items, err := appliedOfList(raw, manager, got)
		if err != nil {
			t.Fatal(err)
		}
		want := appliedOfDecoded(t, raw, manager)
		// What it read is its own: the list's buffer is reused.
		reused := bytes.Repeat([]byte{'x'}, len(raw))
		copy(reused, raw)
		got = map[string]*Applied{}
		if _, _, err := appliedOfList(reused, manager, got); err != nil {
			t.Fatal(err)
		}
		clear(reused)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("manager %s: read %v, want %v", manager, got, want)
		}
		if n := countItems(raw); n != len(list.Items) {
			t.Errorf("countItems: %d, want %d", n, len(list.Items))
		}
		if cont != "next-page" || items != len(list.Items) {
			t.Errorf("continue %q and %d objects, want next-page and %d", cont, items, len(list.Items))
		}
	}
	// Both of the manager's apply entries of the main resource, as the
	// decoded object gives them.
	got := map[string]*Applied{}
	if _, _, err := appliedOfList(raw, "helm", got); err != nil {
		t.Fatal(err)
	}
	if want := "apps/v1\x00" + `{"f:spec":{"f:replicas":{}}}` + "apps/v1beta2\x00" + `{"f:spec":{}}`; got["web"].Fields != want {
		t.Errorf("fields %q, want %q", got["web"].Fields, want)
	}
	// Cut anywhere, the list reads as the generated decoder reads it: a
	// cut between two fields as a shorter list, any other as an error.
	for i := range raw {
		got := map[string]*Applied{}
		_, _, err := appliedOfList(raw[:i], "helm", got)
		want, werr := appliedOfDecodedErr(raw[:i], "helm")
		if (err == nil) != (werr == nil) || (err == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("cut at %d: read %v (%v), the generated decoder %v (%v)", i, got, err, want, werr)
		}
	}
}

// appliedOfDecoded is AppliedOf of each object of the list, decoded by its
// generated decoder.
func appliedOfDecoded(t *testing.T, raw []byte, manager string) map[string]*Applied {
	t.Helper()
	out, err := appliedOfDecodedErr(raw, manager)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func appliedOfDecodedErr(raw []byte, manager string) (map[string]*Applied, error) {
	var l metav1.PartialObjectMetadataList
	if err := l.Unmarshal(raw); err != nil {
		return nil, err
	}
	out := map[string]*Applied{}
	for i := range l.Items {
		out[l.Items[i].Name] = AppliedOf(manager, &l.Items[i])
	}
	return out, nil
}

// Whatever the bytes, appliedOfList does not panic, and what the
// generated decoder reads it reads the same.
func FuzzAppliedOfList(f *testing.F) {
	seed := &metav1.PartialObjectMetadataList{
		ListMeta: metav1.ListMeta{Continue: "c"},
		Items: []metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{
			Name: "a", UID: "u", ResourceVersion: "1", Generation: 2, Labels: map[string]string{"k": "v"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "helm", Operation: "Apply", APIVersion: "v1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{}}`)}},
				{Manager: "other", Operation: "Update", APIVersion: "v1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{}`)}},
			},
		}}},
	}
	raw, err := seed.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add(append(append([]byte{}, raw...), raw...)) // every field twice: merged
	f.Add([]byte{0x12, 0x02, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		got := map[string]*Applied{}
		_, _, err := appliedOfList(data, "helm", got)
		want, werr := appliedOfDecodedErr(data, "helm")
		if err == nil && werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("read %v, the generated decoder %v", got, want)
		}
	})
}
