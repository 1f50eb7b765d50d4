package main

import (
	"fmt"
	"strings"
	"testing"
)

// A release's error names its address once, in plan and in render.
func TestReleaseErrorNamesItsAddressOnce(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "api" {
  chart = "./nochart"
}
`, ns))
	for _, args := range [][]string{
		{"plan", "-C", dir, "--kubeconfig", cluster.Kubeconfig()},
		{"render", "-C", dir},
		{"render", "-C", dir, "--release", "api"},
	} {
		code, _, errOut := runConvoy(t, args...)
		if code != 1 || !strings.Contains(errOut, "Error: Not a chart") || !strings.Contains(errOut, `release.api: chart "./nochart" is not a chart`) || strings.Count(errOut, "release.api") != 1 {
			t.Errorf("%v: exit %d\n%s", args, code, errOut)
		}
	}
}
