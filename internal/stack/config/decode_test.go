package config

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// Each labelled block kind keeps the first of two blocks of one name and
// reports the second, at its own header, naming where the first is.
func TestDuplicateBlocksKeepTheFirst(t *testing.T) {
	tests := []struct {
		kind, block, body string
		first             func(*Config) (hcl.Range, bool)
	}{
		{"variable", `variable "x"`, "", func(c *Config) (hcl.Range, bool) { v, ok := c.Variables["x"]; return rng(v, ok) }},
		{"cluster", `cluster "x"`, "", func(c *Config) (hcl.Range, bool) { v, ok := c.Clusters["x"]; return rng(v, ok) }},
		{"repository", `repository "x"`, `url = "https://charts.example.com"`, func(c *Config) (hcl.Range, bool) { v, ok := c.Repositories["x"]; return rng(v, ok) }},
		{"release", `release "x"`, `chart = "./chart"`, func(c *Config) (hcl.Range, bool) { v, ok := c.Releases["x"]; return rng(v, ok) }},
		{"environment", `environment "x"`, "", func(c *Config) (hcl.Range, bool) { v, ok := c.Environments["x"]; return rng(v, ok) }},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			src := tt.block + " {\n  " + tt.body + "\n}\n\n" + tt.block + " {\n  " + tt.body + "\n}\n"
			cfg, diags := LoadSources(t.TempDir(), map[string][]byte{"main.hcl": []byte(src)})
			var dup *hcl.Diagnostic
			for _, d := range diags {
				if d.Summary == `Duplicate `+tt.kind+` "x"` {
					dup = d
				} else if d.Severity == hcl.DiagError {
					t.Errorf("unexpected diagnostic: %s", d)
				}
			}
			if dup == nil {
				t.Fatalf("no duplicate %s reported; got %v", tt.kind, diags)
			}
			if dup.Subject == nil || dup.Subject.Start.Line != 5 {
				t.Errorf("duplicate reported at %v, want the second block's header on line 5", dup.Subject)
			}
			if !strings.Contains(dup.Detail, "main.hcl:1,1-") {
				t.Errorf("detail %q does not name the first block", dup.Detail)
			}
			if cfg == nil {
				t.Fatal("no config")
			}
			r, ok := tt.first(cfg)
			if !ok || r.Start.Line != 1 {
				t.Errorf("kept %v (found %v), want the first block (line 1)", r, ok)
			}
		})
	}
}

func rng[T interface{ declRange() hcl.Range }](v T, ok bool) (hcl.Range, bool) {
	if !ok {
		return hcl.Range{}, false
	}
	return v.declRange(), true
}
