package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// A sensitive value quoted by an error never reaches the output nor a
// release record's description (as helm history shows it): an API server
// error after the revision is recorded (a hook it rejects), and a template
// error of a release whose values are known only after apply, the secret
// being part of a value the plan could not know (and no other release
// using it).
func TestFailuresDoNotLeakSensitiveValues(t *testing.T) {
	const token = "hunter2 s3cret!"
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	hookLabel, err := filepath.Abs(filepath.Join("testdata", "charts", "hook-label"))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeStack(t, fmt.Sprintf(`
stack %[3]q {
  default_namespace = %[3]q
}
variable "token" {
  sensitive = true
  default   = %[4]q
}
variable "other_token" {
  sensitive = true
  default   = "hunter2-other"
}
release "hooked" {
  chart  = %[1]q
  values = [{ label = var.token }]
}
release "a" {
  chart = %[2]q
}
release "b" {
  chart  = %[2]q
  values = [{ failWith = "bad token ${var.other_token} at revision ${release.a.revision}" }]
}
`, hookLabel, appChart(t), ns, token))
	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress")
	if code != 1 || !strings.Contains(out, `pre-install hook hook-label/templates/hook.yaml`) ||
		!strings.Contains(out, "release.b ("+ns+"/b): execution error at (app/templates/fail.yaml:2:4): refusing to render: (sensitive)") {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "hunter2") {
		t.Errorf("apply output leaks the token:\n%s\n%s", out, errOut)
	}
	// convoy rollback runs the hook again, as pre-rollback.
	code, out, errOut = runConvoy(t, "rollback", "hooked", "1", "-C", dir, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(out, "hooked is at revision 2, failed") || strings.Contains(out+errOut, "hunter2") {
		t.Fatalf("rollback: exit %d\n%s\n%s", code, out, errOut)
	}
	hist, err := cluster.Helm(t, "history", "hooked", "-n", ns, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(hist, `"status":"failed"`) != 2 || strings.Count(hist, `Invalid value: \"(sensitive)\"`) != 2 || strings.Contains(hist, "hunter2") {
		t.Fatalf("helm history of the failed release: %s", hist)
	}
	code, out, errOut = runConvoy(t, "history", "hooked", "-C", dir, "--kubeconfig", kc)
	if code != 0 || !strings.Contains(out, "failed") || strings.Contains(out, "hunter2") {
		t.Fatalf("convoy history: exit %d\n%s\n%s", code, out, errOut)
	}
}
