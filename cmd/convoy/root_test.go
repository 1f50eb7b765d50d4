package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// runConvoy runs the command line in-process and returns exit code, stdout, stderr.
func runConvoy(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := execute(context.Background(), args, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := runConvoy(t, "version")
	if code != 0 || !strings.HasPrefix(out, "convoy ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("version: code %d, output %q", code, out)
	}
}

func TestVersionJSON(t *testing.T) {
	code, out, _ := runConvoy(t, "version", "--json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var v struct {
		Version, Commit, GoVersion string
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("version --json is not JSON: %v\n%s", err, out)
	}
	if v.Version == "" || v.Commit == "" || v.GoVersion != runtime.Version() {
		t.Fatalf("incomplete version info: %+v", v)
	}
}

func TestUnknownCommandFails(t *testing.T) {
	code, out, errOut := runConvoy(t, "no-such-command")
	if code != 1 || out != "" || !strings.Contains(errOut, `unknown command "no-such-command"`) {
		t.Fatalf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestCompletionIsBuiltIn(t *testing.T) {
	code, out, _ := runConvoy(t, "completion", "bash")
	if code != 0 || !strings.Contains(out, "__start_convoy") {
		t.Fatalf("completion bash: code %d, %d bytes", code, len(out))
	}
}

// Every command that prints a plan or an explanation takes --no-color
// (issue 55, item 11: explain did not); a failed run's diagnostics are
// then printed without colours.
func TestNoColorFlags(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte("release \"web\" {\n  chart = \n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"explain", "-C", dir, "--no-color", "web"},
		{"plan", "-C", dir, "--no-color"},
	} {
		code, _, errOut := runConvoy(t, args...)
		if code != 1 || strings.Contains(errOut, "unknown flag") || !strings.Contains(errOut, "stack.hcl line 2") || strings.Contains(errOut, "\x1b[") {
			t.Errorf("%s: exit %d, want 1 and the diagnostic without colours\n%s", strings.Join(args, " "), code, errOut)
		}
	}
	cmd := newExplainCmd(streams{})
	if err := cmd.ParseFlags([]string{"--no-color"}); err != nil || !noColor(cmd) {
		t.Errorf("explain --no-color: %v, noColor %v", err, noColor(cmd))
	}
}
