package planfile

import (
	"reflect"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
)

// A saved plan keeps each changed field's provenance and the release's
// attribution note: convoy show and apply's review print them.
func TestPlanFileKeepsProvenance(t *testing.T) {
	prov := []plan.Origin{
		{Input: "values replicas", Kind: plan.OriginValues, Source: &plan.Source{File: "stack.hcl", Line: 4, Column: 16},
			Via:      []plan.Origin{{Input: "var.replicas", Kind: plan.OriginVariable, Via: []plan.Origin{{Input: "--var", Kind: plan.OriginFlag, Source: &plan.Source{Flag: "--var"}}}}},
			Overrode: []plan.Origin{{Input: "values replicas", Kind: plan.OriginChartDefault, Source: &plan.Source{File: "charts/app/values.yaml", Line: 2}}}},
		{Input: "drift (kubectl-scale)", Kind: plan.OriginDrift},
	}
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Stack: "s", Releases: []*plan.ReleaseChange{{
		Name: "api", Action: plan.ActionUpgrade, Attribution: "too many changed inputs to attribute (40; at most 32 are)",
		Objects: []*plan.ObjectChange{{Ref: plan.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "a", Name: "api"}, Action: plan.ObjectUpdate,
			Diff: &plan.Diff{Changes: []*plan.Change{{Path: "spec.replicas", Op: plan.FieldChange, Before: 1, After: 3, Provenance: prov, ProvenanceJoint: true}}}}},
	}}}
	b, err := Encode(&File{Plan: p})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b, "p.cvp")
	if err != nil {
		t.Fatal(err)
	}
	r := got.Plan.Releases[0]
	c := r.Objects[0].Diff.Changes[0]
	if !reflect.DeepEqual(c.Provenance, prov) || !c.ProvenanceJoint || r.Attribution != p.Releases[0].Attribution {
		t.Fatalf("decoded %+v joint=%v attribution=%q", c.Provenance, c.ProvenanceJoint, r.Attribution)
	}
}
