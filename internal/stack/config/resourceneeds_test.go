package config

import (
	"fmt"
	"testing"
)

// What a release reads of a dependency's resources decides which live
// objects a plan reads: every use must be found, or be read whole.
func TestResourceNeeds(t *testing.T) {
	for _, tc := range []struct {
		expr string
		db   string // the needs of release.db (single), "all" or keys
		web  string // of release.web (count = 2)
	}{
		{`release.db.revision`, "", ""},
		{`"${release.db.status}-${release.web[0].name}"`, "", ""},
		{`length(release.db.resources)`, "", ""},
		{`keys(release.web[count.index].resources)`, "", ""},
		{`release.db.resources["v1/Secret/db-auth"].data.password`, "v1/Secret/db-auth", ""},
		{`release.web[count.index].resources["v1/Service/web"].spec.ports[0].port`, "", "v1/Service/web"},
		{`release.web[0]["resources"]["apps/v1/Deployment/web"]`, "", "apps/v1/Deployment/web"},
		{`[release.db.resources["v1/Secret/a"], release.db.resources["v1/ConfigMap/b"].data]`, "v1/ConfigMap/b\nv1/Secret/a", ""},
		// Read whole, or in ways not told apart: every object.
		{`release.db.resources`, "all", ""},
		{`jsonencode(release.db.resources)`, "all", ""},
		{`length(release.db)`, "", ""},
		{`[for k, v in release.db.resources : k]`, "all", ""},
		{`release.web[*].resources`, "", "all"},
		{`release.web[count.index]`, "", "all"},
		{`release.db.resources[var.key]`, "all", ""},
		{`release.web[count.index].resources[release.db.name]`, "", "all"},
		{`length((release.db.resources))`, "all", ""},
		{`var.on ? release.db.resources["v1/Secret/a"] : {}`, "v1/Secret/a", ""},
		{`try(release.db.resources["v1/Secret/a"].data, {})`, "v1/Secret/a", ""},
		{`merge(release.db.resources, {})`, "all", ""},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			s := mustEvaluate(t, map[string]string{"main.hcl": fmt.Sprintf(`
variable "key" {
  default = "v1/Secret/a"
}
variable "on" {
  default = true
}
release "db" {
  chart = "./c"
}
release "web" {
  count = 2
  name  = "web-${count.index}"
  chart = "./c"
}
release "reader" {
  count  = 2
  name   = "reader-${count.index}"
  chart  = "./c"
  values = [{ x = %s }]
}`, tc.expr)}, EvalOptions{})
			if got := s.ResourceNeeds("reader", "db").String(); got != tc.db {
				t.Errorf("db: %q, want %q", got, tc.db)
			}
			if got := s.ResourceNeeds("reader", "web").String(); got != tc.web {
				t.Errorf("web: %q, want %q", got, tc.web)
			}
		})
	}
}
