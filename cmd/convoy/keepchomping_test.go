package main

import (
	"fmt"
	"testing"
)

// TestKeepChompingAtTheEndOfATemplateSettles: Helm applies the objects it
// parses from the release manifest, where each document is followed by a
// newline; a block scalar with keep chomping (|+) that ends a template keeps
// that newline (bitnami harbor's configuration files). convoy applies the
// same value, so that the record and the cluster agree and plans settle.
func TestKeepChompingAtTheEndOfATemplateSettles(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "conf" {
  chart = %[2]q
}
`, ns, testChart(t, "keep-chomping")))
	kc := cluster.Kubeconfig()
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	// What helm install applies (helm get manifest, parsed as one stream).
	if got, want := configMap(t, ns, "conf-conf")["app.conf"], "[prod]\nport = 8080\n\n"; got != want {
		t.Fatalf("app.conf = %q, want %q as Helm applies it", got, want)
	}
	for i := range 3 {
		if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
			t.Fatalf("plan %d after apply: exit %d\n%s\n%s", i+1, code, out, errOut)
		}
	}
}
