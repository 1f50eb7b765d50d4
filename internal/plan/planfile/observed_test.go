package planfile

import (
	"reflect"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/plantest"
)

// A plan file of format version 5 (convoy before observations were typed)
// marks an observation's kind by its hash's prefix: it is read with each
// observation typed, the prefix gone, so that applying it compares what
// the plan saw as a plan of today would.
func TestVersion5ObservationsAreTyped(t *testing.T) {
	const v5 = `{"Kind":"convoy-plan","FormatVersion":5,"Plan":{"FormatVersion":1,"Stack":"shop","Releases":[{"Name":"web","Namespace":"shop",
"Observed":{"LastRevision":1,"LastStatus":"deployed","Objects":[
 {"Ref":"apps/v1 Deployment shop/web","ResourceVersion":"10","Hash":"applied:{\"uid\":\"u1\"}"},
 {"Ref":"v1 ConfigMap shop/web","ResourceVersion":"11","Hash":"shape:0a1b"},
 {"Ref":"v1 Secret shop/old","ResourceVersion":"12","Hash":"2c3d"},
 {"Ref":"v1 Service shop/web"}
]}}]}}`
	f, err := Decode(gz(t, v5), "old.cvp")
	if err != nil {
		t.Fatal(err)
	}
	got := f.Plan.Releases[0].Observed.Objects
	want := []struct {
		kind     plan.ObservationKind
		rv, hash string
	}{
		{plan.ObservedApplied, "10", `{"uid":"u1"}`},
		{plan.ObservedShape, "11", "0a1b"},
		{plan.ObservedContent, "12", "2c3d"},
		{plan.ObservedAbsent, "", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("%d observations, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Kind != w.kind || got[i].ResourceVersion != w.rv || got[i].Hash != w.hash {
			t.Errorf("%s: %s %q %q, want %s %q %q", got[i].Ref, got[i].Kind, got[i].ResourceVersion, got[i].Hash, w.kind, w.rv, w.hash)
		}
	}
}

// A plan file of this version keeps its observations as they were: a
// content hash that happens to start like a legacy prefix is not read as
// one.
func TestObservationsRoundTrip(t *testing.T) {
	p := plantest.Sample()
	obs := []plan.ObservedObject{
		{Ref: plan.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "a"}, Kind: plan.ObservedContent, ResourceVersion: "1", Hash: "shape:not-a-prefix"},
		{Ref: plan.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "b"}, Kind: plan.ObservedApplied, ResourceVersion: "2", Hash: "x"},
		{Ref: plan.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "c"}, Kind: plan.ObservedAbsent},
	}
	p.Releases[0].Observed.Objects = obs
	b, err := Encode(&File{Plan: p})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b, "p.cvp")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Plan.Releases[0].Observed.Objects, obs) {
		t.Fatalf("observations %+v, want %+v", got.Plan.Releases[0].Observed.Objects, obs)
	}
}
