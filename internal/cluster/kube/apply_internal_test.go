package kube

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestActionOf(t *testing.T) {
	const owned = `{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}}`
	const ownedNoLabel = `{"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}}`
	object := func(manager, fields, annotations, image, sidecarImage string, replicas int) *unstructured.Unstructured {
		doc := `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
  annotations: ` + annotations + `
  managedFields:
  - {manager: ` + manager + `, operation: Apply, apiVersion: apps/v1, fieldsType: FieldsV1, fieldsV1: ` + fields + `}
spec:
  replicas: ` + string(rune('0'+replicas)) + `
  template:
    spec:
      containers:
      - {name: web, image: ` + image + `, ports: [{containerPort: 80, protocol: TCP}]}
      - {name: sidecar, image: ` + sidecarImage + `}
status: {observedGeneration: 3}
`
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
	base := object("convoy", owned, "{}", "web:1", "side:1", 2)
	tests := []struct {
		name          string
		before, after *unstructured.Unstructured
		want          Action
	}{
		{"same", base, object("convoy", owned, "{}", "web:1", "side:1", 2), ActionUnchanged},
		{"controller annotated meanwhile", base, object("convoy", owned, "{deployment.kubernetes.io/revision: '1'}", "web:1", "side:1", 2), ActionUnchanged},
		{"unowned container changed", base, object("convoy", owned, "{}", "web:1", "side:2", 2), ActionUnchanged},
		{"owned container image", base, object("convoy", owned, "{}", "web:2", "side:1", 2), ActionConfigured},
		{"owned scalar", base, object("convoy", owned, "{}", "web:1", "side:1", 3), ActionConfigured},
		{"field no longer applied", base, object("convoy", ownedNoLabel, "{}", "web:1", "side:1", 2), ActionConfigured},
		{"taken over from another manager", object("helm", owned, "{}", "web:1", "side:1", 2), object("convoy", owned, "{}", "web:1", "side:1", 2), ActionConfigured},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := actionOf(tt.before, tt.after, "convoy"); got != tt.want {
				t.Errorf("actionOf = %s, want %s", got, tt.want)
			}
		})
	}
	if got := actionOf(nil, base, "convoy"); got != ActionCreated {
		t.Errorf("actionOf(nil, …) = %s, want created", got)
	}
}
