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
