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
