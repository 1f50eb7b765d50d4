package kube

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// decodedFields is a field set as the server writes it (paths, in
// fieldpath's own encoding) and as an object decoded into a map gives it
// back: encoding/json's, each object's keys sorted as strings.
func decodedFields(t testing.TB, paths ...fieldpath.Path) (server, decoded []byte) {
	t.Helper()
	server, err := fieldpath.NewSet(paths...).ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(server, &m); err != nil {
		t.Fatal(err)
	}
	if decoded, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	return server, decoded
}

func fpField(name string) fieldpath.PathElement { return fieldpath.PathElement{FieldName: &name} }

func fpKey(fields ...any) fieldpath.PathElement {
	var l value.FieldList
	for i := 0; i < len(fields); i += 2 {
		l = append(l, value.Field{Name: fields[i].(string), Value: value.NewValueInterface(fields[i+1])})
	}
	return fieldpath.PathElement{Key: &l}
}

func fpVal(v any) fieldpath.PathElement {
	x := value.NewValueInterface(v)
	return fieldpath.PathElement{Value: &x}
}

func fpIndex(i int) fieldpath.PathElement { return fieldpath.PathElement{Index: &i} }

func fpPath(elems ...fieldpath.PathElement) fieldpath.Path { return fieldpath.Path(elems) }

// TestInServerOrder: a decoded set whose order is the server's is taken
// as it is, and written again as the server writes it, it is unchanged;
// one whose order is not (a Service's ports 80 and 443, sorted as strings)
// is written again in the server's order.
func TestInServerOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		paths   []fieldpath.Path
		inOrder bool
	}{
		{"ConfigMap", []fieldpath.Path{fpPath(fpField("data"), fpField("a.yaml")), fpPath(fpField("data"), fpField("b")), fpPath(fpField("metadata"), fpField("labels"), fpField("app.kubernetes.io/name"))}, true},
		{"one port", []fieldpath.Path{fpPath(fpField("spec"), fpField("ports"), fpKey("port", 80, "protocol", "TCP"), fpField("targetPort"))}, true},
		{"env A, B", []fieldpath.Path{
			fpPath(fpField("spec"), fpField("containers"), fpKey("name", "app"), fpField("env"), fpKey("name", "A"), fpField("value")),
			fpPath(fpField("spec"), fpField("containers"), fpKey("name", "app"), fpField("env"), fpKey("name", "B"), fpField("value")),
			fpPath(fpField("spec"), fpField("containers"), fpKey("name", "app"), fpField("image")),
		}, true},
		{"ports 80, 443", []fieldpath.Path{
			fpPath(fpField("spec"), fpField("ports"), fpKey("port", 80, "protocol", "TCP"), fpField("targetPort")),
			fpPath(fpField("spec"), fpField("ports"), fpKey("port", 443, "protocol", "TCP"), fpField("targetPort")),
		}, false},
		{"set values 9, 10", []fieldpath.Path{fpPath(fpField("spec"), fpField("finalizers"), fpVal(9)), fpPath(fpField("spec"), fpField("finalizers"), fpVal(10))}, false},
		{"indexes 2, 10", []fieldpath.Path{fpPath(fpField("spec"), fpField("args"), fpIndex(2)), fpPath(fpField("spec"), fpField("args"), fpIndex(10))}, false},
		{"member with children", []fieldpath.Path{fpPath(fpField("spec"), fpField("template")), fpPath(fpField("spec"), fpField("template"), fpField("metadata"))}, true},
		{"html in a name", []fieldpath.Path{fpPath(fpField("data"), fpField("<a>"))}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server, decoded := decodedFields(t, tc.paths...)
			if got := inServerOrder(decoded); got != tc.inOrder {
				t.Fatalf("inServerOrder(%s) = %v, want %v", decoded, got, tc.inOrder)
			}
			if got := inServerOrder(server); !got && tc.inOrder {
				t.Fatalf("the server's own bytes %s are not in its order", server)
			}
			if got := serverFieldsOrder(decoded); string(got) != string(server) {
				t.Fatalf("serverFieldsOrder(%s) = %s, want the server's %s", decoded, got, server)
			}
			if got := rewriteFieldsOrder(decoded); string(got) != string(server) {
				t.Fatalf("rewriteFieldsOrder(%s) = %s, want the server's %s", decoded, got, server)
			}
		})
	}
}

// FuzzInServerOrder: what inServerOrder takes as it is, written again as
// the server writes it (rewriteFieldsOrder) is unchanged.
func FuzzInServerOrder(f *testing.F) {
	for _, paths := range [][]fieldpath.Path{
		{fpPath(fpField("data"), fpField("a")), fpPath(fpField("data"), fpField("b"))},
		{fpPath(fpField("spec"), fpField("ports"), fpKey("port", 80, "protocol", "TCP"), fpField("targetPort")), fpPath(fpField("spec"), fpField("ports"), fpKey("port", 443, "protocol", "TCP"))},
		{fpPath(fpField("spec"), fpField("template")), fpPath(fpField("spec"), fpField("template"), fpField("metadata"), fpField("labels"), fpField("x"))},
		{fpPath(fpField("a"), fpVal("x")), fpPath(fpField("a"), fpVal(true)), fpPath(fpField("a"), fpIndex(3))},
	} {
		server, decoded := decodedFields(f, paths...)
		f.Add(server)
		f.Add(decoded)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if inServerOrder(raw) {
			if got := rewriteFieldsOrder(raw); string(got) != string(raw) {
				t.Fatalf("taken as in the server's order: %s\nthe server's: %s", raw, got)
			}
		}
	})
}

// appliedViaManagedFields is AppliedOf's Fields of a decoded object read
// through GetManagedFields, as AppliedOf read them before appliedFieldsOf.
func appliedViaManagedFields(fieldManager string, u *unstructured.Unstructured) string {
	var fields string
	for _, mf := range u.GetManagedFields() {
		if mf.Manager == fieldManager && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "" && mf.FieldsV1 != nil {
			fields += mf.APIVersion + "\x00" + string(rewriteFieldsOrder(mf.FieldsV1.Raw))
		}
	}
	return fields
}

// TestAppliedOfDecodedAsManagedFields: the fields AppliedOf reads of a
// decoded object's managedFields are those GetManagedFields gives,
// whatever the entries hold, well formed or not.
func TestAppliedOfDecodedAsManagedFields(t *testing.T) {
	_, ports := decodedFields(t,
		fpPath(fpField("spec"), fpField("ports"), fpKey("port", 80, "protocol", "TCP"), fpField("targetPort")),
		fpPath(fpField("spec"), fpField("ports"), fpKey("port", 443, "protocol", "TCP"), fpField("targetPort")))
	var portsMap map[string]any
	if err := json.Unmarshal(ports, &portsMap); err != nil {
		t.Fatal(err)
	}
	entry := func(manager, op string, kv ...any) map[string]any {
		m := map[string]any{"manager": manager, "operation": op, "apiVersion": "v1", "time": "2026-12-03T10:00:00Z", "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:data": map[string]any{"f:<a&b>": map[string]any{}, "f:x": map[string]any{}}}}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "<delete>" {
				delete(m, kv[i].(string))
				continue
			}
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	const me = "convoy"
	for name, entries := range map[string][]any{
		"none":                     nil,
		"mine and the controllers": {entry(me, "Apply"), entry("kube-controller-manager", "Update"), entry(me, "Update"), entry(me, "Apply", "subresource", "status")},
		"two apiVersions":          {entry(me, "Apply"), entry(me, "Apply", "apiVersion", "apps/v1", "fieldsV1", portsMap)},
		"ports out of order":       {entry(me, "Apply", "fieldsV1", portsMap)},
		"fields null":              {entry(me, "Apply", "fieldsV1", nil)},
		"fields empty":             {entry(me, "Apply", "fieldsV1", map[string]any{})},
		"no time":                  {entry(me, "Apply", "time", "<delete>")},
		"bad time":                 {entry(me, "Apply"), entry("other", "Update", "time", "yesterday")},
		"operation a number":       {entry(me, "Apply"), entry("other", "Update", "operation", 5)},
		"unknown key":              {entry(me, "Apply", "extra", "x")},
		"not a map":                {entry(me, "Apply"), "entry"},
	} {
		t.Run(name, func(t *testing.T) {
			md := map[string]any{"name": "a", "uid": "u1"}
			if entries != nil {
				md["managedFields"] = entries
			}
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md}}
			got, want := AppliedOf(me, u).Fields, appliedViaManagedFields(me, u)
			if got != want {
				t.Fatalf("AppliedOf read %q, GetManagedFields gives %q", got, want)
			}
		})
	}
	// Not left to GetManagedFields: a malformed list reads as no fields.
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"managedFields": "x"}}}
	if got := AppliedOf(me, u).Fields; got != "" {
		t.Fatalf("managedFields not a list: %q", got)
	}
}
