package config

import (
	"strings"
	"testing"
)

func TestClusterRateLimits(t *testing.T) {
	st, diags := evaluateSources(t, map[string]string{"main.hcl": `
stack "s" {}
cluster "big" {
  context = "big"
  qps     = 50
  burst   = 100
}
cluster "small" {
  context = "small"
}
`}, EvalOptions{})
	if diags != "" {
		t.Fatal(diags)
	}
	if c := st.Clusters["big"]; c.QPS != 50 || c.Burst != 100 {
		t.Errorf("big: qps %d burst %d, want 50 and 100", c.QPS, c.Burst)
	}
	if c := st.Clusters["small"]; c.QPS != 0 || c.Burst != 0 {
		t.Errorf("small: qps %d burst %d, want the run's (0)", c.QPS, c.Burst)
	}
	for src, want := range map[string]string{
		`cluster "c" { qps = 0 }`:     "qps must be at least 1",
		`cluster "c" { burst = 1.5 }`: "a whole number required",
		`cluster "c" { qps = "x" }`:   "number required",
	} {
		_, diags := evaluateSources(t, map[string]string{"main.hcl": "stack \"s\" {}\n" + src + "\n"}, EvalOptions{})
		if !strings.Contains(diags, want) || !strings.Contains(diags, "main.hcl:2") {
			t.Errorf("%s: want %q at main.hcl:2, got %s", src, want, diags)
		}
	}
}
