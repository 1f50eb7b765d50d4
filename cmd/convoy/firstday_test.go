package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/release"
)

// Issue 21: what a new user hit on a first day with a real stack.

// `cd DIR && convoy apply` on a stack without a stack block names the stack
// after DIR, not "." (which no label selector takes).
func TestStackNamedAfterWorkingDirectory(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := filepath.Join(t.TempDir(), ns)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(fmt.Sprintf("release \"db\" {\n  chart     = %q\n  namespace = %q\n}\n", appChart(t), ns)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if code, out, errOut := runConvoy(t, "plan", "--kubeconfig", kc); code != 0 || !strings.Contains(out, "Plan: 1 to install") {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if h := statusOf(t, ns, "db"); len(h) != 1 || h[0].Labels[release.StackLabel] != ns {
		t.Fatalf("db's record: %s, labels %v", revisions(h), h[0].Labels)
	}
}
