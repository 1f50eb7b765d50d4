package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update to accept):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// TestValidateExamples checks that every stack under examples/ is valid.
func TestValidateExamples(t *testing.T) {
	dirs, err := filepath.Glob("../../examples/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		n++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			code, out, errOut := runConvoy(t, "validate", "-C", dir)
			if code != 0 || !strings.Contains(out, "is valid") || errOut != "" {
				t.Fatalf("validate %s: exit %d\nstdout: %s\nstderr: %s", dir, code, out, errOut)
			}
		})
	}
	if n < 2 {
		t.Fatalf("found %d example stacks, want at least 2", n)
	}
}

const invalidStacks = "../../internal/stack/config/testdata/invalid/"

// TestValidateRendersDiagnostics checks the human output: the source line,
// the caret under the offending reference, the whole cycle path, exit 1.
func TestValidateRendersDiagnostics(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	code, out, errOut := runConvoy(t, "validate", "-C", invalidStacks+"cycle")
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{
		"Error: Dependency cycle",
		"main.hcl line 13",
		`set   = { "a" = release.a.namespace }`,
		"^^^^^^^^^^^^^^^^^^^",
		"release.a → release.b → release.c → release.a",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "\x1b[") {
		t.Errorf("colour escape codes in non-terminal output:\n%q", errOut)
	}
}

func TestValidateJSON(t *testing.T) {
	code, out, _ := runConvoy(t, "validate", "--json", "-C", invalidStacks+"wrong_type")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var res validateResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if res.Valid || res.ErrorCount != 2 || len(res.Diagnostics) != 2 {
		t.Fatalf("unexpected result: %+v", res)
	}
	d := res.Diagnostics[0]
	if d.Severity != "error" || d.Summary != "Incorrect attribute value type" || d.Range == nil ||
		d.Range.Start.Line != 3 || d.Range.Start.Column != 17 || !strings.HasSuffix(d.Range.Filename, "main.hcl") {
		t.Errorf("first diagnostic: %+v (range %+v)", d, d.Range)
	}

	code, out, _ = runConvoy(t, "validate", "--json", "-C", "../../examples/shop")
	if code != 0 || !strings.Contains(out, `"valid": true`) {
		t.Fatalf("valid stack: exit %d\n%s", code, out)
	}
}

// TestValidateVariables checks --var, --var-file and CONVOY_VAR_* reach the
// evaluation, and that a validation rule failing exits 1.
func TestValidateVariables(t *testing.T) {
	code, _, errOut := runConvoy(t, "validate", "-C", "../../examples/shop", "--var", "api_replicas=0")
	if code != 1 || !strings.Contains(errOut, "api_replicas must be between 1 and 20.") {
		t.Fatalf("--var api_replicas=0: exit %d\n%s", code, errOut)
	}
	t.Setenv("CONVOY_VAR_api_replicas", "50")
	code, _, errOut = runConvoy(t, "validate", "-C", "../../examples/shop")
	if code != 1 || !strings.Contains(errOut, "api_replicas must be between 1 and 20.") {
		t.Fatalf("CONVOY_VAR_api_replicas=50: exit %d\n%s", code, errOut)
	}
	// --var wins over the environment.
	code, _, errOut = runConvoy(t, "validate", "-C", "../../examples/shop", "--var", "api_replicas=3")
	if code != 0 {
		t.Fatalf("--var over env: exit %d\n%s", code, errOut)
	}
}

func TestValidateVarFile(t *testing.T) {
	varFile := filepath.Join(t.TempDir(), "prod.vars.hcl")
	if err := os.WriteFile(varFile, []byte("regions = [\"eu-west\"]\napi_replicas = \"many\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runConvoy(t, "validate", "-C", "../../examples/shop", "--var-file", varFile)
	if code != 1 || !strings.Contains(errOut, "prod.vars.hcl line 2") || !strings.Contains(errOut, "Invalid value for variable") {
		t.Fatalf("--var-file with a wrong type: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runConvoy(t, "validate", "-C", "../../examples/shop", "--var", "nope")
	if code != 1 || !strings.Contains(errOut, `"nope" is not of the form name=value`) {
		t.Fatalf("--var nope: exit %d\n%s", code, errOut)
	}
}

// TestBadVariableValueNamesItsSource: a value of the wrong type is reported
// with where it came from, whatever the source; a malformed --var or an
// unreadable --var-file is a diagnostic (in --json too).
func TestBadVariableValueNamesItsSource(t *testing.T) {
	t.Setenv("CONVOY_VAR_api_replicas", "many")
	code, _, errOut := runConvoy(t, "validate", "-C", "../../examples/shop")
	if code != 1 || !strings.Contains(errOut, "The value for var.api_replicas from CONVOY_VAR_api_replicas is not a number") {
		t.Fatalf("CONVOY_VAR_api_replicas=many: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runConvoy(t, "validate", "-C", "../../examples/shop", "--var", "api_replicas=lots")
	if code != 1 || !strings.Contains(errOut, "The value for var.api_replicas from --var is not a number") {
		t.Fatalf("--var api_replicas=lots: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runConvoy(t, "validate", "-C", "../../examples/shop", "--var", "api_replicas=3", "--var-file", filepath.Join(t.TempDir(), "missing.vars.hcl"))
	if code != 1 || !strings.Contains(errOut, "Cannot read variables file") || !strings.Contains(errOut, "missing.vars.hcl") {
		t.Fatalf("missing --var-file: exit %d\n%s", code, errOut)
	}
	code, out, _ := runConvoy(t, "validate", "--json", "-C", "../../examples/shop", "--var", "nope")
	if code != 1 || !strings.Contains(out, `"valid": false`) || !strings.Contains(out, `is not of the form name=value`) {
		t.Fatalf("validate --json --var nope: exit %d\n%s", code, out)
	}
}

func TestGraphFormats(t *testing.T) {
	for _, format := range []string{"text", "dot", "mermaid"} {
		t.Run(format, func(t *testing.T) {
			code, out, errOut := runConvoy(t, "graph", "-C", "../../examples/shop", "--format", format)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			compareGolden(t, filepath.Join("testdata", "graph-shop."+format), out)
		})
	}
	code, _, errOut := runConvoy(t, "graph", "-C", "../../examples/shop", "--format", "png")
	if code != 1 || !strings.Contains(errOut, `unknown format "png"`) {
		t.Fatalf("--format png: exit %d, %s", code, errOut)
	}
	code, _, errOut = runConvoy(t, "graph", "-C", invalidStacks+"cycle")
	if code != 1 || !strings.Contains(errOut, "Dependency cycle") {
		t.Fatalf("graph of a cyclic stack: exit %d, %s", code, errOut)
	}
}

const unformatted = `release "web" {
chart = "./charts/web"
  values = [{a=1,
  bb = 2}]
    timeout="5m"
}
`

func TestFmt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "main.hcl")
	if err := os.WriteFile(path, []byte(unformatted), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.auto.vars.hcl"), []byte("a = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// --check changes nothing and exits 3.
	code, out, _ := runConvoy(t, "fmt", "-C", dir, "--check")
	if code != 3 || strings.TrimSpace(out) != path {
		t.Fatalf("fmt --check: exit %d, stdout %q", code, out)
	}
	if b, _ := os.ReadFile(path); string(b) != unformatted {
		t.Fatal("fmt --check modified the file")
	}

	// --diff shows the change.
	code, out, _ = runConvoy(t, "fmt", "-C", dir, "--check", "--diff")
	if code != 3 || !strings.Contains(out, "-    timeout=\"5m\"\n") || !strings.Contains(out, "+  timeout = \"5m\"\n") || !strings.Contains(out, "@@ -1,6 +1,6 @@") {
		t.Fatalf("fmt --diff: exit %d\n%s", code, out)
	}

	// fmt rewrites, after which --check passes.
	code, out, _ = runConvoy(t, "fmt", "-C", dir)
	if code != 0 || strings.TrimSpace(out) != path {
		t.Fatalf("fmt: exit %d, stdout %q", code, out)
	}
	b, _ := os.ReadFile(path)
	if !bytes.Contains(b, []byte("\n  chart = \"./charts/web\"\n")) || !bytes.Contains(b, []byte("\n  timeout = \"5m\"\n")) {
		t.Fatalf("not formatted:\n%s", b)
	}
	if code, out, _ := runConvoy(t, "fmt", "-C", dir, "--check"); code != 0 || out != "" {
		t.Fatalf("fmt --check after fmt: exit %d, %q", code, out)
	}
}

func TestFmtLeavesSyntaxErrorsAlone(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "main.hcl")
	broken := "release \"web\" {\nchart = \n"
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runConvoy(t, "fmt", "-C", dir)
	if code != 1 || !strings.Contains(errOut, "main.hcl line") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if b, _ := os.ReadFile(path); string(b) != broken {
		t.Fatal("fmt modified a file with syntax errors")
	}
}

func TestExamplesAreFormatted(t *testing.T) {
	dirs, _ := filepath.Glob("../../examples/*")
	for _, dir := range dirs {
		if code, out, errOut := runConvoy(t, "fmt", "--check", "-C", dir); code != 0 {
			t.Errorf("%s is not formatted (exit %d): %s%s", dir, code, out, errOut)
		}
	}
}
