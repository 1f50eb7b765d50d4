package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestInstallSettlesWithAChecksumOfAGeneratedSecret: a chart generates a
// password unless lookup finds the live Secret, and annotates its pod
// template with the checksum of the Secret template (bitnami's
// common.secrets with checksum/secret, as in rabbitmq and kafka). Each
// include generates another password on install, so the checksum must be
// taken of the Secret as the install creates it, or the first plan after the
// install would roll the pods.
func TestInstallSettlesWithAChecksumOfAGeneratedSecret(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "mq" {
  chart = %[2]q
}
`, ns, testChart(t, "checksum-secret")))
	kc := cluster.Kubeconfig()
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	for i := range 3 {
		if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
			t.Fatalf("plan %d after apply: exit %d\n%s\n%s", i+1, code, out, errOut)
		}
	}
	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress")
	if code != 0 || !strings.Contains(out, "No changes.") {
		t.Fatalf("second apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := revisions(statusOf(t, ns, "mq")); got != "1:deployed" {
		t.Fatalf("revisions %s, want only the install", got)
	}
}
