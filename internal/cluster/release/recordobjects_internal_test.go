package release

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The objects annotation reads back as written, short (JSON) and long
// (compressed); a damaged one reads as absent, so the plan parses the
// manifest instead.
func TestRecordObjectsAnnotation(t *testing.T) {
	short := []RecordObject{
		{Ref: kube.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, Template: "web/templates/deployment.yaml"},
		{Ref: kube.Ref{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: "web"}, Template: "web/templates/rbac.yaml"},
		{Ref: kube.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web"}, Template: "web/charts/common/templates/cm.yaml"},
	}
	var long []RecordObject
	for i := range 100 {
		long = append(long, RecordObject{Ref: kube.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: fmt.Sprintf("cm-%03d", i)}, Template: "web/templates/cms.yaml"})
	}
	for _, objs := range [][]RecordObject{short, long} {
		v, err := encodeRecordObjects(objs)
		if err != nil {
			t.Fatal(err)
		}
		if compressed := strings.HasPrefix(v, objectsGzipPrefix); compressed != (len(objs) == len(long)) {
			t.Errorf("%d objects: compressed=%v (%d bytes)", len(objs), compressed, len(v))
		}
		got, ok := RecordObjectsOf(&Release{Annotations: map[string]string{ObjectsAnnotation: v}})
		if !ok || !slices.Equal(got, objs) {
			t.Fatalf("%d objects: read back %v (%v)", len(objs), got, ok)
		}
	}
	for _, bad := range []string{"", "[[", `[["t","","Kind","ns","n"]]`, objectsGzipPrefix + "not base64", objectsGzipPrefix + "aGVsbG8="} {
		if got, ok := RecordObjectsOf(&Release{Annotations: map[string]string{ObjectsAnnotation: bad}}); ok {
			t.Errorf("%q read as %v", bad, got)
		}
	}
	if _, ok := RecordObjectsOf(&Release{}); ok {
		t.Error("a record without the annotation read as having one")
	}
}

// A record read from metadata decodes its objects annotation once, and
// answers for that annotation only: a copy it hands out may be changed,
// a record whose annotation changed is decoded again, a damaged one stays
// absent.
func TestRecordObjectsOfAPartialRecordAreKept(t *testing.T) {
	one := []RecordObject{{Ref: kube.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "a"}, Template: "web/templates/cm.yaml"}}
	two := append(slices.Clone(one), RecordObject{Ref: kube.Ref{Version: "v1", Kind: "Secret", Namespace: "shop", Name: "b"}, Template: "web/templates/secret.yaml"})
	v1, err := encodeRecordObjects(one)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := encodeRecordObjects(two)
	if err != nil {
		t.Fatal(err)
	}
	rec := &Release{Annotations: map[string]string{ObjectsAnnotation: v1}, partial: true, objects: &recordObjectsMemo{}}
	got, ok := RecordObjectsOf(rec)
	if !ok || !slices.Equal(got, one) {
		t.Fatalf("read %v (%v), want %v", got, ok, one)
	}
	got[0].Ref.Name = "changed by a caller"
	if got, _ := RecordObjectsOf(rec); !slices.Equal(got, one) {
		t.Fatalf("read again %v, want %v", got, one)
	}
	rec.Annotations[ObjectsAnnotation] = v2
	if got, _ := RecordObjectsOf(rec); !slices.Equal(got, two) {
		t.Fatalf("after the annotation changed: %v, want %v", got, two)
	}
	bad := &Release{Annotations: map[string]string{ObjectsAnnotation: "[["}, objects: &recordObjectsMemo{}}
	for range 2 {
		if got, ok := RecordObjectsOf(bad); ok {
			t.Fatalf("a damaged annotation read as %v", got)
		}
	}
}

// The entries recordWriters keeps are read without decoding; what that
// says is what decoding them says.
func TestKeptRecordWritersReadAsDecoded(t *testing.T) {
	for _, raw := range [][]byte{keptPayload, keptObjects, keptPayloadObjects} {
		var f recordFields
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		_, payload := f.Data["f:release"]
		_, objects := f.Metadata.Annotations["f:"+ObjectsAnnotation]
		p, o := ownsOfRecord(metav1.ManagedFieldsEntry{Manager: "convoy", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}})
		if p != payload || o != objects {
			t.Errorf("%s: payload %v objects %v, decoded %v %v", raw, p, o, payload, objects)
		}
	}
}

// plainRows reads what encoding/json reads, or leaves it to it: the
// annotations convoy writes, with spaces, empty, and what it must not
// take (escapes, invalid UTF-8, rows of other lengths, trailing bytes).
func TestPlainRowsAsEncodingJSON(t *testing.T) {
	written, err := json.Marshal([][5]string{
		{"templates/deployment.yaml", "apps/v1", "Deployment", "ns", "web"},
		{"templates/crd.yaml", "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com"},
		{"charts/sub/templates/é.yaml", "v1", "ConfigMap", "ns", "ünïcode"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in    string
		plain bool
	}{
		{string(written), true},
		{"[]", true},
		{" [ [ \"a\" , \"v1\",\"ConfigMap\",\"\",\"x\" ] ]\n", true},
		{`[["a\"b","v1","ConfigMap","","x"]]`, false},
		{`[["a\u00e9","v1","ConfigMap","","x"]]`, false},
		{"[[\"\xff\",\"v1\",\"ConfigMap\",\"\",\"x\"]]", false},
		{`[["a","v1","ConfigMap","x"]]`, false},
		{`[["a","v1","ConfigMap","","x","y"]]`, false},
		{`[["a","v1","ConfigMap","","x"]] x`, false},
		{`[["a","v1","ConfigMap","","x"],]`, false},
		{`null`, false},
		{`[["a","v1","ConfigMap","",1]]`, false},
		{`[["a","v1","ConfigMap","","x"`, false},
	} {
		rows, ok := plainRows(tc.in)
		if ok != tc.plain {
			t.Errorf("%q: plain %v, want %v", tc.in, ok, tc.plain)
		}
		if !ok {
			continue
		}
		var want [][5]string
		if err := json.Unmarshal([]byte(tc.in), &want); err != nil {
			t.Fatalf("%q: read, where encoding/json fails: %v", tc.in, err)
		}
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("%q: %q, encoding/json %q", tc.in, rows, want)
		}
	}
}

// Whatever the annotation, plainRows does not panic, and what it reads
// encoding/json reads the same.
func FuzzPlainRows(f *testing.F) {
	f.Add(`[["templates/a.yaml","apps/v1","Deployment","ns","web"]]`)
	f.Add(`[]`)
	f.Add(`[["a\"","v1","ConfigMap","","x"]]`)
	f.Fuzz(func(t *testing.T, in string) {
		rows, ok := plainRows(in)
		if !ok {
			return
		}
		var want [][5]string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("read %q, where encoding/json fails: %v", in, err)
		}
		if !reflect.DeepEqual(rows, want) {
			t.Fatalf("%q: %q, encoding/json %q", in, rows, want)
		}
	})
}
