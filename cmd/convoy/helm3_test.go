package main

import (
	"fmt"
	"testing"
)

// TestHelm3ReleaseOfTheSameChartAndValuesIsUnchanged: Helm 3 stores each
// manifest and hook document with its trailing blank lines trimmed, Helm 4
// and convoy as rendered; Helm 3 prints a chart's null defaults
// (`limits: null`, as podinfo's values give it), Helm 4 and convoy drop
// them. A release Helm 3 installed with the chart and
// values of the stack is unchanged: no upgrade that changes no object and
// runs the hooks again.
func TestHelm3ReleaseOfTheSameChartAndValuesIsUnchanged(t *testing.T) {
	ns := cluster.Namespace(t)
	chart := testChart(t, "helm3-whitespace")
	if out, err := cluster.Helm3(t, "install", "legacy", chart, "-n", ns, "--set", "extra=true"); err != nil {
		t.Fatalf("helm3 install: %v\n%s", err, out)
	}
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "legacy" {
  chart = %[2]q
  set   = { extra = true }
  adopt = true
}
`, ns, chart))
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan of helm 3's release: exit %d\n%s\n%s", code, out, errOut)
	}
}
