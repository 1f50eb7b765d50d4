package kube

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func fromYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

func ptr(t *testing.T, s string) Pointer {
	t.Helper()
	p, err := ParsePointer(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// liveDeployment is a Deployment whose replicas and web image are owned by
// the given managers (managedFields as the API server writes them).
func liveDeployment(t *testing.T, replicasOwner, imageOwner string) *unstructured.Unstructured {
	entry := func(manager, op, sub, fields string) string {
		return `  - {manager: ` + manager + `, operation: ` + op + `, subresource: "` + sub + `", apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: ` + fields + "}\n"
	}
	const ours = `{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:name":{},"f:args":{}}}}}}}`
	mf := entry("helm", "Apply", "", ours)
	switch replicasOwner {
	case "helm":
		mf += entry("helm", "Apply", "", `{"f:spec":{"f:replicas":{}}}`)
	case "":
	default:
		mf += entry(replicasOwner, "Update", "scale", `{"f:spec":{"f:replicas":{}}}`)
	}
	mf += entry(imageOwner, "Update", "", `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}}}`)
	return fromYAML(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
  managedFields:
`+mf+`spec:
  replicas: 4
  template:
    spec:
      containers:
      - {name: sidecar, image: side:1}
      - {name: web, image: web:2, args: [a, b]}
`)
}

func TestOwnersOf(t *testing.T) {
	live := liveDeployment(t, "kubectl", "kubectl-set")
	tests := []struct {
		path string
		want string
	}{
		{"/spec/replicas", `"kubectl" with subresource "scale"`},
		{"/spec/template/spec/containers/1/image", `"kubectl-set"`},
		{"/spec/template/spec/containers/1", `"helm", "kubectl-set"`},
		{"/spec/template/spec/containers/1/args/0", `"helm"`}, // args is atomic: owned whole
		{"/spec/template/spec/containers/0/image", ``},
		{"/spec", `"helm", "kubectl" with subresource "scale", "kubectl-set"`},
		{"/metadata/annotations", ``},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			var got []string
			for _, o := range OwnersOf(live, ptr(t, tt.path)) {
				got = append(got, o.String())
			}
			if strings.Join(got, ", ") != tt.want {
				t.Errorf("owners %s, want %s", strings.Join(got, ", "), tt.want)
			}
		})
	}
}

func TestLeave(t *testing.T) {
	c := &Client{fieldManager: "helm", predecessors: DefaultPredecessors}
	rendered := func() *unstructured.Unstructured {
		return fromYAML(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - {name: web, image: web:1, args: [a, b]}
`)
	}
	replicas := func(u *unstructured.Unstructured) string {
		v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas")
		if !ok {
			return "absent"
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	tests := []struct {
		name string
		live *unstructured.Unstructured
		want string
	}{
		{"object absent: created as rendered", nil, "2"},
		{"another manager owns it: left out", liveDeployment(t, "kubectl", "kubectl-set"), "absent"},
		{"nobody owns it: left out", liveDeployment(t, "", "kubectl-set"), "absent"},
		{"only ours owns it: the live value, or apply would delete it", liveDeployment(t, "helm", "kubectl-set"), "4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := rendered()
			got := c.leave(obj, tt.live, []Pointer{ptr(t, "/spec/replicas"), ptr(t, "/spec/paused")})
			if r := replicas(got); r != tt.want {
				t.Errorf("replicas %s, want %s", r, tt.want)
			}
			if replicas(obj) != "2" {
				t.Errorf("leave modified its input")
			}
			if _, ok, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "paused"); ok && tt.live != nil {
				t.Errorf("a field the object does not set was added")
			}
		})
	}
}

func TestStripRemovesEmptiedMaps(t *testing.T) {
	obj := fromYAML(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, annotations: {a/b: x}}
data: {color: blue}
`)
	rules := IgnoreRules{
		{Kind: "ConfigMap", Name: "sett*", Paths: []Pointer{ptr(t, "/metadata/annotations/a~1b")}},
		{Kind: "ConfigMap", Name: "other", Paths: []Pointer{ptr(t, "/data/color")}},
		{Kind: "Secret", Paths: []Pointer{ptr(t, "/data/color")}},
	}
	got := rules.Strip(obj)
	if _, ok := got.GetAnnotations()["a/b"]; ok || got.Object["metadata"].(map[string]any)["annotations"] != nil {
		t.Errorf("annotation not stripped: %v", got.Object["metadata"])
	}
	if got.Object["data"].(map[string]any)["color"] != "blue" {
		t.Errorf("a rule for another name or kind applied: %v", got.Object["data"])
	}
	if obj.GetAnnotations()["a/b"] != "x" {
		t.Errorf("Strip modified its input")
	}
}

func TestIsOwn(t *testing.T) {
	c := &Client{fieldManager: "helm", predecessors: DefaultPredecessors}
	for _, tt := range []struct {
		o    FieldOwner
		want bool
	}{
		{FieldOwner{Manager: "helm", Operation: metav1.ManagedFieldsOperationApply}, true},
		{FieldOwner{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate}, true},
		{FieldOwner{Manager: "convoy", Operation: metav1.ManagedFieldsOperationApply}, true},
		{FieldOwner{Manager: "helm", Operation: metav1.ManagedFieldsOperationApply, Subresource: "status"}, false},
		{FieldOwner{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}, false},
	} {
		if got := c.IsOwn(tt.o); got != tt.want {
			t.Errorf("IsOwn(%+v) = %v", tt.o, got)
		}
	}
}
