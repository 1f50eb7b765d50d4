package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func planStack(chart, ns, apiMessage string) string {
	return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
variable "token" {
  type      = string
  sensitive = true
  default   = "tok-canary-4411"
}
release "db" {
  chart  = %[1]q
  values = [{ message = "db" }]
}
release "api" {
  chart      = %[1]q
  depends_on = [release.db]
  values     = [{ message = %[3]q, token = var.token }]
}
`, chart, ns, apiMessage)
}

func TestPlanDetailedExitCode(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, planStack(appChart(t), ns, "v1"))

	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "Plan: 2 to install, 0 to upgrade, 0 to uninstall, 0 unchanged.") {
		t.Fatalf("plan before install: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}

	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 0 || !strings.Contains(out, "No changes.") || !strings.Contains(out, "0 to upgrade, 0 to uninstall, 2 unchanged.") {
		t.Fatalf("unchanged stack: exit %d\n%s\n%s", code, out, errOut)
	}
	// Without --detailed-exitcode, changes still exit 0.
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(planStack(appChart(t), ns, "v2")), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc); code != 0 {
		t.Fatalf("plan without --detailed-exitcode: exit %d", code)
	}
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 2 {
		t.Fatalf("changed value: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"~ release.api (upgrade)",
		// The values leaf, then (after where it was set, when known) the
		// objects.
		"      values:\n        ~ message: \"v1\" → \"v2\"",
		"\n      ~ v1 ConfigMap",
		`~ data.message: "v1" → "v2"`,
		"Plan: 0 to install, 1 to upgrade, 0 to uninstall, 1 unchanged.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "release.db") || strings.Contains(out+errOut, "tok-canary-4411") {
		t.Fatalf("plan shows more than the change, or the sensitive value:\n%s", out)
	}

	code, out, _ = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--json")
	var doc map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc["format_version"] != 1.0 || doc["has_changes"] != true {
		t.Fatalf("--json: exit %d\n%s", code, out)
	}
	code, out, _ = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--markdown", "--target", "release.api")
	if code != 0 || !strings.Contains(out, "| `release.api` |") || strings.Contains(out, "release.db") {
		t.Fatalf("--markdown --target: exit %d\n%s", code, out)
	}

	planFile := filepath.Join(t.TempDir(), "plan.cvp")
	code, _, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--out", planFile)
	if code != 0 || !strings.Contains(errOut, "mode 0600") || !strings.Contains(errOut, "sensitive values") {
		t.Fatalf("--out: exit %d\n%s", code, errOut)
	}
	if fi, err := os.Stat(planFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("plan file: %v %v", fi, err)
	}
}

func TestPlanBadFlags(t *testing.T) {
	dir := writeStack(t, planStack(appChart(t), "x", "v1"))
	if code, _, errOut := runConvoy(t, "plan", "-C", dir, "--json", "--markdown"); code != 1 || !strings.Contains(errOut, "exclude each other") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	cluster.Need(t)
	if code, _, errOut := runConvoy(t, "plan", "-C", dir, "--target", "release.nope", "--kubeconfig", cluster.Kubeconfig()); code != 1 || !strings.Contains(errOut, "No such release") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
