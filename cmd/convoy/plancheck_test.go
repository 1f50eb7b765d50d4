package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
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
	p, err := filepath.Abs(filepath.Join("..", "..", "internal", "plan", "planner", "testdata", "charts", "transform"))
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

// TestTransformedCanaryNeverPrinted: a sensitive value through upper,
// trunc, b64enc | b64enc and sha256sum is absent from the plan in every
// format and from apply's output, including an API server error quoting
// the transformed values.
func TestTransformedCanaryNeverPrinted(t *testing.T) {
	const canary = "canary-5e1b-never-print"
	b64 := base64.StdEncoding.EncodeToString([]byte(canary))
	sum := sha256.Sum256([]byte(canary))
	leaks := []string{canary, b64, strings.ToUpper(canary), canary[:9], base64.StdEncoding.EncodeToString([]byte(b64)), hex.EncodeToString(sum[:])}
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, transformStack(transformChart(t), ns, canary, "values = [{ badHook = true }]"))
	var all strings.Builder
	run := func(args ...string) int {
		code, out, errOut := runConvoy(t, append(args, "-C", dir, "--kubeconfig", kc)...)
		all.WriteString(out + errOut)
		return code
	}
	for _, format := range [][]string{nil, {"--json"}, {"--markdown"}} {
		if code := run(append([]string{"plan"}, format...)...); code != 0 {
			t.Fatalf("plan %v: exit %d\n%s", format, code, all.String())
		}
	}
	// The pre-install hook's labels are refused: the error quotes them.
	if code := run("apply", "--auto-approve", "--no-progress"); code != 1 {
		t.Fatalf("apply: exit %d\n%s", code, all.String())
	}
	for _, leak := range leaks {
		if strings.Contains(all.String(), leak) {
			t.Fatalf("%q was printed:\n%s", leak, all.String())
		}
	}
	if !strings.Contains(all.String(), `metadata.labels: Invalid value: "(sensitive)"`) {
		t.Fatalf("the API server's error was not reported:\n%s", all.String())
	}
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
