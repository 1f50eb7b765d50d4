package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// transformChart renders a sensitive value through upper, trunc,
// b64enc | b64enc and sha256sum; values add an invalid object or a hook the
// API server refuses.
func transformChart(t *testing.T) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "internal", "plan", "testdata", "charts", "transform"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func transformStack(chart, ns, secret, extra string) string {
	return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
variable "secret" {
  sensitive = true
  default   = %[3]q
}
release "t" {
  chart         = %[1]q
  set_sensitive = { secret = var.secret }
  %[4]s
}
`, chart, ns, secret, extra)
}

// TestInvalidObjectFailsThePlanAndCreatesNothing: plan exits 1 naming the
// template; apply creates nothing, not even the namespace it would create.
func TestInvalidObjectFailsThePlanAndCreatesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	fresh := ns + "-new"
	t.Cleanup(func() {
		_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), fresh, metav1.DeleteOptions{})
	})
	extra := fmt.Sprintf("namespace = %q\n  create_namespace = true\n  values = [{ badName = true }]", fresh)
	dir := writeStack(t, transformStack(transformChart(t), ns, "s3cret-value", extra))
	for _, cmd := range [][]string{{"plan"}, {"apply", "--auto-approve", "--no-progress"}} {
		code, out, errOut := runConvoy(t, append(cmd, "-C", dir, "--kubeconfig", cluster.Kubeconfig())...)
		if code != 1 || !strings.Contains(errOut, "template transform/templates/bad-name.yaml") || !strings.Contains(errOut, "v1 ConfigMap "+fresh+"/Bad_Name!!") {
			t.Fatalf("%v: exit %d\n%s%s", cmd, code, out, errOut)
		}
	}
	if _, err := cluster.Client().CoreV1().Namespaces().Get(context.Background(), fresh, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("namespace %s: %v", fresh, err)
	}
}
