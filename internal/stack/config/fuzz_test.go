package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// FuzzLoadEvaluate parses and evaluates arbitrary stack files. It must never
// panic, and every error must be a diagnostic. The seed corpus is every
// .hcl file under testdata and examples; crashers found by `go test -fuzz`
// are kept in testdata/fuzz/FuzzLoadEvaluate as regression cases.
func FuzzLoadEvaluate(f *testing.F) {
	for _, pattern := range []string{"testdata/*/*/*.hcl", "../../../examples/*/*.hcl"} {
		files, _ := filepath.Glob(pattern)
		for _, name := range files {
			src, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
	f.Add([]byte(`release "x" { chart = "./c" values = [templatefile("values/db.yaml", {})] }`))
	f.Add([]byte(`locals { a = try(jsondecode("{"), yamldecode("a: [1"), "x") }`))
	// Evaluate in a stack directory with files for file() to read.
	dir := "testdata/valid/shop"
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, diags := LoadSources(dir, map[string][]byte{"fuzz.hcl": src})
		checkDiags(t, diags)
		if cfg == nil {
			t.Fatal("LoadSources returned no config")
		}
		stack, diags := evaluateAsRun(cfg, EvalOptions{Variables: EnvVarValues(testEnv)})
		checkDiags(t, diags)
		if stack == nil {
			if !diags.HasErrors() {
				t.Fatal("no stack and no error")
			}
			return
		}
		if _, d := stack.Graph(); d.HasErrors() {
			t.Fatalf("an evaluated stack has a cyclic graph: %v", d)
		}
		for _, ri := range stack.Releases {
			for _, l := range ri.Values {
				DisplayValue(l.Value)
			}
			if _, d := stack.EvaluateRelease(ri.Addr, map[ReleaseInstanceAddr]AppliedRelease{}); d.HasErrors() {
				t.Fatalf("re-evaluating %s failed where evaluating succeeded: %v", ri.Addr, d)
			}
		}
	})
}

// checkDiags fails on diagnostics that lack what rendering needs.
func checkDiags(t *testing.T, diags hcl.Diagnostics) {
	t.Helper()
	for _, d := range diags {
		if d.Summary == "" {
			t.Fatalf("diagnostic without summary: %#v", d)
		}
	}
}
