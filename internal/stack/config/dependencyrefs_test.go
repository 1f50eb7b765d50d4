package config

import (
	"fmt"
	"strings"
	"testing"
)

// TestDependencyRefs: what a release reads of another, as written, for
// naming the dependents of a release a targeted destroy removes.
func TestDependencyRefs(t *testing.T) {
	s := mustEvaluate(t, map[string]string{"main.hcl": `
release "db" {
  chart = "./c"
}
release "keycloak" {
  chart  = "./c"
  values = [{
    host = release.db.name
    ns   = release.db.namespace
    again = release.db.name
  }]
}
release "exporter" {
  chart      = "./c"
  depends_on = [release.db]
}
release "per" {
  for_each = toset(["a", "b"])
  chart    = "./c"
  values   = [{ db = release.db.status }]
}
`}, EvalOptions{})
	db := ReleaseAddr{Name: "db"}.Instance(NoKey)
	got := func(dependent ReleaseInstanceAddr) string {
		var parts []string
		for _, r := range s.DependencyRefs(dependent, db) {
			parts = append(parts, fmt.Sprintf("%s@%d%s", r.Text, r.Range.Start.Line, map[bool]string{true: " (depends_on)"}[r.DependsOn]))
		}
		return strings.Join(parts, ", ")
	}
	for _, tt := range []struct {
		dependent ReleaseInstanceAddr
		want      string
	}{
		{ReleaseAddr{Name: "keycloak"}.Instance(NoKey), "release.db.name@8, release.db.namespace@9"},
		{ReleaseAddr{Name: "exporter"}.Instance(NoKey), "release.db@15 (depends_on)"},
		{ReleaseAddr{Name: "per"}.Instance(StringKey("a")), "release.db.status@20"},
		{db, ""},
	} {
		if g := got(tt.dependent); g != tt.want {
			t.Errorf("%s reads %q, want %q", tt.dependent, g, tt.want)
		}
	}
}

// TestImplicitMoves: instance [0] of a block with count was the block's
// single instance before count was added, and the reverse; a name or
// for_each says there is no move. A kept name replaces the default one.
func TestImplicitMoves(t *testing.T) {
	files := map[string]string{"main.hcl": `
release "keda" {
  count = 2
  chart = "./c"
}
release "named" {
  count = 1
  name  = "named-${count.index}"
  chart = "./c"
}
release "each" {
  for_each = toset(["a"])
  chart    = "./c"
}
release "single" {
  chart = "./c"
}
release "reader" {
  chart  = "./c"
  values = [{ keda = release.keda[0].name }]
}
`}
	s := mustEvaluate(t, files, EvalOptions{})
	var got []string
	for _, m := range s.ImplicitMoves() {
		got = append(got, fmt.Sprintf("%s<-%s(%s,%v)", m.Addr, m.From, m.FromName, m.CountAdded))
	}
	want := `release.keda[0]<-release.keda(keda,true) release.reader<-release.reader[0](reader-0,false) release.single<-release.single[0](single-0,false)`
	if strings.Join(got, " ") != want {
		t.Errorf("moves:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}

	keda0 := ReleaseAddr{Name: "keda"}.Instance(IntKey(0))
	s = mustEvaluate(t, files, EvalOptions{KeptNames: map[ReleaseInstanceAddr]string{keda0: "keda"}})
	if r := s.Release(keda0); r.Name != "keda" {
		t.Errorf("release.keda[0] is named %q, want the kept name keda", r.Name)
	}
	if r := s.Release(ReleaseAddr{Name: "keda"}.Instance(IntKey(1))); r.Name != "keda-1" {
		t.Errorf("release.keda[1] is named %q", r.Name)
	}
	reader := s.Release(ReleaseAddr{Name: "reader"}.Instance(NoKey))
	if v, _ := reader.Values[0].Value.GetAttr("keda").Unmark(); v.AsString() != "keda" {
		t.Errorf("release.keda[0].name reads %#v, want the kept name", v)
	}
}
