package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestValuesEqualToDefaultsChangeNoObject is item 7 of issue 55: a value
// set to what the chart defaults it to plans an upgrade that changes no
// object, and says so; --skip-no-op-upgrades leaves the release alone
// (no revision), and a saved plan refuses the flag.
func TestValuesEqualToDefaultsChangeNoObject(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	// The shape `helm create` scaffolds: replicaCount defaults to 1.
	chart, err := filepath.Abs(filepath.Join("testdata", "charts", "scaffolded"))
	if err != nil {
		t.Fatal(err)
	}
	stack := func(values string) string {
		return fmt.Sprintf("stack \"noop-%s\" {\n  default_namespace = %q\n}\nrelease \"web\" {\n  chart  = %q\n  values = [%s]\n}\n", ns[len(ns)-6:], ns, chart, values)
	}
	dir := writeStack(t, stack(""))
	run := func(what string, want int, args ...string) string {
		t.Helper()
		code, out, errOut := runConvoy(t, append(args, "-C", dir, "--kubeconfig", kc)...)
		if code != want {
			t.Fatalf("%s: exit %d, want %d\n%s\n%s", what, code, want, out, errOut)
		}
		return out + errOut
	}
	run("apply", 0, "apply", "--auto-approve", "--no-progress")
	rewriteStack(t, dir, stack(`{ replicaCount = 1 }`))
	out := run("plan", 2, "plan", "--detailed-exitcode")
	if !strings.Contains(out, "values changed, no object changes") || !strings.Contains(out, "1 to upgrade") {
		t.Fatalf("the plan does not say the upgrade changes no object:\n%s", out)
	}
	out = run("plan --skip-no-op-upgrades", 0, "plan", "--detailed-exitcode", "--skip-no-op-upgrades")
	if !strings.Contains(out, "left alone (--skip-no-op-upgrades)") {
		t.Fatalf("the plan does not say the release was left alone:\n%s", out)
	}
	run("apply --skip-no-op-upgrades", 0, "apply", "--auto-approve", "--no-progress", "--skip-no-op-upgrades")
	if got := revisions(statusOf(t, ns, "web")); got != "1:deployed" {
		t.Fatalf("history %s after apply --skip-no-op-upgrades, want revision 1 only", got)
	}
	planFile := t.TempDir() + "/saved.plan"
	run("plan --out", 2, "plan", "--detailed-exitcode", "--out", planFile)
	if out := run("apply PLAN --skip-no-op-upgrades", 1, "apply", planFile, "--auto-approve", "--skip-no-op-upgrades"); !strings.Contains(out, "a saved plan keeps what it was planned with") {
		t.Fatalf("a saved plan took --skip-no-op-upgrades:\n%s", out)
	}
	run("apply", 0, "apply", "--auto-approve", "--no-progress")
	if got := revisions(statusOf(t, ns, "web")); got != "1:superseded 2:deployed" {
		t.Fatalf("history %s after apply, want the values recorded in revision 2", got)
	}
}
