package plan_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/convoy-sh/convoy/internal/plan"
)

// widgetCRD is a CRD of widgets.example.com with versions, each
// "name:served:storage:schema" (schema: the JSON of spec's properties).
func widgetCRD(t *testing.T, stored string, versions ...string) map[string]any {
	t.Helper()
	var vs []string
	for _, v := range versions {
		parts := strings.SplitN(v, ":", 4)
		vs = append(vs, `{"name":"`+parts[0]+`","served":`+parts[1]+`,"storage":`+parts[2]+`,
		  "schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":`+parts[3]+`}}}}}`)
	}
	return obj(t, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
	  "spec":{"group":"example.com","scope":"Namespaced","names":{"kind":"Widget","plural":"widgets"},"versions":[`+strings.Join(vs, ",")+`]},
	  "status":{"storedVersions":[`+stored+`]}}`)
}

func TestCompareCRDs(t *testing.T) {
	const (
		sizeColor   = `{"size":{"type":"integer"},"color":{"type":"string"}}`
		sizeOnly    = `{"size":{"type":"integer"}}`
		sizeAsText  = `{"size":{"type":"string"},"color":{"type":"string"}}`
		withShape   = `{"size":{"type":"integer"},"color":{"type":"string"},"shape":{"type":"object","properties":{"sides":{"type":"integer"}}}}`
		deeperShape = `{"size":{"type":"integer"},"color":{"type":"string"},"shape":{"type":"object","properties":{"sides":{"type":"integer"},"name":{"type":"string"}}}}`
	)
	tests := []struct {
		name          string
		before, after map[string]any
		lines         []string
		loss          []string
	}{
		{
			name:   "same",
			before: widgetCRD(t, `"v1"`, "v1:true:true:"+sizeColor),
			after:  widgetCRD(t, `"v1"`, "v1:true:true:"+sizeColor),
		},
		{
			name:   "a version added as the storage version",
			before: widgetCRD(t, `"v1alpha1"`, "v1alpha1:true:true:"+sizeColor),
			after:  widgetCRD(t, `"v1alpha1"`, "v1alpha1:true:false:"+sizeColor, "v1:true:true:"+sizeColor),
			lines: []string{
				"version v1: added (served true, storage true)",
				"version v1alpha1: storage true → false",
			},
		},
		{
			name:   "a stored version removed",
			before: widgetCRD(t, `"v1alpha1","v1"`, "v1alpha1:true:false:"+sizeColor, "v1:true:true:"+sizeColor),
			after:  widgetCRD(t, `"v1alpha1","v1"`, "v1:true:true:"+sizeColor),
			lines:  []string{"version v1alpha1: removed (listed in status.storedVersions)"},
			loss:   []string{"version v1alpha1 is removed while status.storedVersions lists it"},
		},
		{
			name:   "a version never stored in removed",
			before: widgetCRD(t, `"v1"`, "v1alpha1:true:false:"+sizeColor, "v1:true:true:"+sizeColor),
			after:  widgetCRD(t, `"v1"`, "v1:true:true:"+sizeColor),
			lines:  []string{"version v1alpha1: removed"},
		},
		{
			name:   "a stored version no longer served",
			before: widgetCRD(t, `"v1alpha1","v1"`, "v1alpha1:true:false:"+sizeColor, "v1:true:true:"+sizeColor),
			after:  widgetCRD(t, `"v1alpha1","v1"`, "v1alpha1:false:false:"+sizeColor, "v1:true:true:"+sizeColor),
			lines:  []string{"version v1alpha1: served true → false"},
			loss:   []string{"version v1alpha1 is no longer served while status.storedVersions lists it"},
		},
		{
			name:   "a field removed and one retyped",
			before: widgetCRD(t, `"v1"`, "v1:true:true:"+sizeColor),
			after:  widgetCRD(t, `"v1"`, "v1:true:true:"+sizeOnly),
			lines:  []string{"version v1: - spec.color (string), pruned from stored objects"},
			loss:   []string{"version v1's schema drops spec.color: its values are pruned from the objects"},
		},
		{
			name:   "two fields removed: one loss",
			before: widgetCRD(t, `"v1"`, "v1:true:true:"+withShape),
			after:  widgetCRD(t, `"v1"`, "v1:true:true:"+sizeOnly),
			lines: []string{
				"version v1: - spec.color (string), pruned from stored objects",
				"version v1: - spec.shape (object), pruned from stored objects",
			},
			loss: []string{"version v1's schema drops spec.color and spec.shape: their values are pruned from the objects"},
		},
		{
			name:   "retyped",
			before: widgetCRD(t, `"v1"`, "v1:true:true:"+sizeColor),
			after:  widgetCRD(t, `"v1"`, "v1:true:true:"+sizeAsText),
			lines:  []string{"version v1: ~ spec.size (integer → string)"},
		},
		{
			name:   "an object added: listed once, not its properties",
			before: widgetCRD(t, `"v1"`, "v1:true:true:"+sizeColor),
			after:  widgetCRD(t, `"v1"`, "v1:true:true:"+withShape),
			lines:  []string{"version v1: + spec.shape (object)"},
		},
		{
			name:   "a property deeper down",
			before: widgetCRD(t, `"v1"`, "v1:true:true:"+withShape),
			after:  widgetCRD(t, `"v1"`, "v1:true:true:"+deeperShape),
			lines:  []string{"version v1: + spec.shape.name (string)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := plan.CompareCRDs(tt.before, tt.after)
			if diff := cmp.Diff(tt.lines, c.Lines()); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			rc := &plan.ReleaseChange{Action: plan.ActionUpgrade, Objects: []*plan.ObjectChange{{Ref: crdRef, Action: plan.ObjectUpdate, CRD: c}}}
			if tt.lines == nil {
				rc.Objects[0].Action = plan.ObjectNoOp
			}
			imp := plan.ComputeImpact(rc, plan.ImpactFacts{})
			var loss []plan.DataLoss
			if imp != nil {
				loss = imp.DataLoss
			}
			if len(tt.loss) == 0 {
				if len(loss) != 0 {
					t.Errorf("data loss: %+v", loss)
				}
				return
			}
			if len(loss) != 1 || loss[0].Ref != crdRef {
				t.Fatalf("data loss: %+v", loss)
			}
			for _, want := range tt.loss {
				if !strings.Contains(loss[0].Reason, want) {
					t.Errorf("data loss reason %q lacks %q", loss[0].Reason, want)
				}
			}
		})
	}
}

// A property removed under an object that keeps unknown fields is not
// pruned.
func TestCompareCRDsPreservedUnknownFields(t *testing.T) {
	before := widgetCRD(t, `"v1"`, `v1:true:true:{"size":{"type":"integer"},"color":{"type":"string"}}`)
	after := widgetCRD(t, `"v1"`, `v1:true:true:{"size":{"type":"integer"}}`)
	for _, m := range []map[string]any{before, after} {
		v := m["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
		spec := v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)
		spec["x-kubernetes-preserve-unknown-fields"] = true
	}
	c := plan.CompareCRDs(before, after)
	if diff := cmp.Diff([]string{"version v1: - spec.color (string)"}, c.Lines()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}
