package config

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// A key that is not there is named, with the keys that are, at the
// expression's range: not "object with 7 attributes".
func TestWrongKeyDiagnosticNamesKeys(t *testing.T) {
	res := cty.ObjectVal(map[string]cty.Value{
		"v1/Secret/db-auth":      cty.ObjectVal(map[string]cty.Value{"data": cty.ObjectVal(map[string]cty.Value{"password": cty.StringVal("x")})}),
		"v1/Service/db":          cty.EmptyObjectVal,
		"apps/v1/StatefulSet/db": cty.EmptyObjectVal,
	})
	for _, tc := range []struct {
		name, expr, subject string
		want                []string
	}{
		{"resources key", `release.db.resources["v1/Secret/db-auht"].data.password`, `["v1/Secret/db-auht"]`,
			[]string{`release.db.resources has no key "v1/Secret/db-auht"`, `its keys are "apps/v1/StatefulSet/db", "v1/Secret/db-auth", "v1/Service/db"`}},
		{"computed key", `release.db.resources["v1/Secret/${"db-auht"}"]`, `["v1/Secret/${"db-auht"}"]`,
			[]string{`release.db.resources has no key "v1/Secret/db-auht"`, `"v1/Secret/db-auth"`}},
		{"nested attribute", `release.db.resources["v1/Secret/db-auth"].data.pasword`, `.pasword`,
			[]string{`release.db.resources["v1/Secret/db-auth"].data has no key "pasword"`, `its keys are "password"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `
release "db" {
  chart = "./c"
}
release "reader" {
  chart  = "./c"
  values = [{
    password = ` + tc.expr + `
  }]
}`
			s := mustEvaluate(t, map[string]string{"main.hcl": src}, EvalOptions{})
			db := ReleaseInstanceAddr{Release: ReleaseAddr{Name: "db"}}
			reader := ReleaseInstanceAddr{Release: ReleaseAddr{Name: "reader"}}
			_, diags := s.EvaluateRelease(reader, map[ReleaseInstanceAddr]AppliedRelease{db: {Revision: 1, Status: "deployed", Resources: res}})
			if len(diags) != 1 || !diags.HasErrors() {
				t.Fatalf("want one error, got %v", diags)
			}
			d := diags[0]
			for _, w := range tc.want {
				if !strings.Contains(d.Detail, w) {
					t.Errorf("detail %q lacks %q", d.Detail, w)
				}
			}
			line := strings.Split(src, "\n")[7]
			start := strings.Index(line, tc.subject)
			if d.Subject == nil || d.Subject.Start.Line != 8 || d.Subject.Start.Column != start+1 || d.Subject.End.Column != start+1+len(tc.subject) {
				t.Errorf("subject %v, want line 8 columns %d-%d", d.Subject, start+1, start+1+len(tc.subject))
			}
		})
	}
}

// A wrong attribute of a release is found before apply, and named.
func TestWrongReleaseAttributeNamesKeys(t *testing.T) {
	_, diags := evaluateSources(t, map[string]string{"main.hcl": `
release "db" {
  chart = "./c"
}
release "reader" {
  chart  = "./c"
  values = [{ x = release.db.resource["v1/Secret/db-auth"] }]
}`}, EvalOptions{})
	want := `main.hcl:7:29: error: Unsupported attribute: release.db has no key "resource"; its keys are "chart", "name", "namespace", "resources", "revision", "status", "version".`
	if !strings.Contains(diags, want) {
		t.Fatalf("diagnostics %q lack %q", diags, want)
	}
}
