package config

import (
	"strings"
	"testing"
)

func TestSelect(t *testing.T) {
	st := mustEvaluate(t, map[string]string{"main.hcl": `
release "db"  {
  chart  = "./c"
  labels = { tier = "data" }
}
release "api" {
  chart    = "./c"
  for_each = toset(["eu", "us"])
  labels   = { tier = "api", region = each.key }
}
release "web" {
  chart  = "./c"
  labels = { tier = "web" }
}
`}, EvalOptions{})
	tests := []struct {
		name      string
		selectors []string
		targets   []string
		want      string
		err       string
	}{
		{name: "equal", selectors: []string{"tier=api"}, want: `release.api["eu"] release.api["us"]`},
		{name: "and", selectors: []string{"tier=api,region=us"}, want: `release.api["us"]`},
		{name: "or", selectors: []string{"tier=web", "tier=data"}, want: `release.db release.web`},
		{name: "not", selectors: []string{"tier!=api"}, want: `release.db release.web`},
		{name: "missing label differs", selectors: []string{"region!=eu"}, want: `release.api["us"] release.db release.web`},
		{name: "implicit name", selectors: []string{"name=web"}, want: `release.web`},
		{name: "with targets", selectors: []string{"tier=web"}, targets: []string{"release.db"}, want: `release.db release.web`},
		{name: "nothing", selectors: []string{"tier=cache"}, err: "The selector -l tier=cache matches no release instance"},
		{name: "malformed", selectors: []string{"tier"}, err: `invalid selector "tier"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, diags := st.Selection(tt.targets, tt.selectors)
			if tt.err != "" {
				if !strings.Contains(diags.Error(), tt.err) {
					t.Fatalf("diagnostics %v, want %q", diags, tt.err)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			var s []string
			for _, a := range got {
				s = append(s, a.String())
			}
			if strings.Join(s, " ") != tt.want {
				t.Errorf("got %q, want %q", strings.Join(s, " "), tt.want)
			}
		})
	}
}
