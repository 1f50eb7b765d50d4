package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate checks releases against their charts offline: a path that is
// not a chart, values breaking values.schema.json, a set value --set cannot
// take; each at its attribute's file:line.
func TestValidateChecksReleasesAgainstTheirCharts(t *testing.T) {
	chart, err := filepath.Abs(filepath.Join("testdata", "charts", "schema"))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeStack(t, `stack "v" {}

release "ok" {
  chart  = "`+chart+`"
  values = [{ replicas = 2 }]
}

release "broken" {
  chart  = "`+chart+`"
  values = ["replicas: many\n"]
}

release "nochart" {
  chart = "./not-a-chart"
}

release "deps" {
  chart = "./needs-init"
}

release "badset" {
  chart = "`+chart+`"
  set = {
    "replicas" = 2
    "hosts"    = ["a", "b"]
  }
}
`)
	if err := os.Mkdir(filepath.Join(dir, "not-a-chart"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A chart whose dependencies convoy init has not fetched yet is a chart.
	if err := os.MkdirAll(filepath.Join(dir, "needs-init", "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "needs-init", "Chart.yaml"), []byte("apiVersion: v2\nname: needs-init\nversion: 0.1.0\ndependencies:\n  - {name: redis, version: 1.0.0, repository: https://charts.example.com}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CONVOY_CACHE_DIR", t.TempDir())
	t.Setenv("NO_COLOR", "1")
	code, out, errOut := runConvoy(t, "validate", "-C", dir)
	if code != 1 || out != "" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"Error: Values break the chart's schema",
		"on " + filepath.Join(dir, "stack.hcl") + " line 10, in release \"broken\":",
		"release.broken: the values do not meet the chart's values.schema.json",
		"replicas",
		"Error: Not a chart",
		"line 14, in release \"nochart\"",
		"Error: Invalid set value",
		"line 25, in release \"badset\"",
		`"hosts"    = ["a", "b"]`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("validate output lacks %q", want)
		}
	}
	if strings.Contains(errOut, `release "ok"`) || strings.Contains(errOut, `release "deps"`) || t.Failed() {
		t.Fatalf("validate output:\n%s", errOut)
	}
}
