package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestAPIWarningsPrintOnceAsKubectlDoes: the API server's warnings about a
// deprecated field reach stderr as "Warning: ..." once per run, not as klog
// lines at every request (plan's dry run, apply's dry run, apply).
func TestAPIWarningsPrintOnceAsKubectlDoes(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "svc" {
  chart = %[2]q
}
`, ns, testChart(t, "deprecated-field")))
	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve", "--no-progress")
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	const want = "Warning: spec.trafficDistribution"
	if n := strings.Count(errOut, want); n != 1 || strings.Contains(errOut, "warnings.go") {
		t.Fatalf("stderr has %q %d times, want once and no klog lines:\n%s", want, n, errOut)
	}
}
