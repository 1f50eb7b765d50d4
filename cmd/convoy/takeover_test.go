package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A release helm installed is not the stack's to change until its block
// says adopt = true: the plan says who installed it and exits 1, apply
// and destroy leave it alone; with adopt = true it is applied.
func TestHelmReleaseNeedsAdopt(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	if out, err := cluster.Helm(t, "install", "ops-app", appChart(t), "-n", ns); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	stack := func(extra string) string {
		return fmt.Sprintf("stack \"ops\" {\n  default_namespace = %q\n}\nrelease \"ops\" {\n  name   = \"ops-app\"\n  chart  = %q\n  values = [{ message = \"from-the-stack\" }]\n%s}\n", ns, appChart(t), extra)
	}
	dir := writeStack(t, stack(""))
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(out, "! release.ops (refused: installed by helm, not by a stack)") ||
		!strings.Contains(out, "adopt: installed by helm, not by a stack; apply refuses to change it unless its release block says adopt = true") {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 1 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "destroy", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 || !strings.Contains(out+errOut, "installed by helm, not by a stack: destroy leaves it alone") {
		t.Fatalf("destroy: exit %d\n%s\n%s", code, out, errOut)
	}
	if h := statusOf(t, ns, "ops-app"); revisions(h) != "1:deployed" {
		t.Fatalf("helm's release after the refused apply and destroy: %s", revisions(h))
	}

	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack("  adopt = true\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply with adopt = true: exit %d\n%s\n%s", code, out, errOut)
	}
	h := statusOf(t, ns, "ops-app")
	if revisions(h) != "1:superseded 2:deployed" || h[1].Labels["convoy.dev/stack"] != "ops" {
		t.Fatalf("after adopt = true: %s, labels %v", revisions(h), h[len(h)-1].Labels)
	}
}
