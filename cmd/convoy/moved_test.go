package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rewriteStack replaces the stack's files with hcl.
func rewriteStack(t *testing.T, dir, hcl string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMovedSameName: a release block renamed with a moved block keeps its
// Helm release: the plan names both addresses and installs and uninstalls
// nothing, apply writes no revision (only the address on the record), and
// the next plan has nothing to say.
func TestMovedSameName(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	head := fmt.Sprintf("stack \"mv-%s\" {\n  default_namespace = %q\n}\n", ns[len(ns)-6:], ns)
	block := func(addr string) string {
		return fmt.Sprintf("release %q {\n  name  = \"web\"\n  chart = %q\n}\n", addr, appChart(t))
	}
	dir := writeStack(t, head+block("old"))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply exit %d\n%s\n%s", code, out, errOut)
	}
	if got := statusOf(t, ns, "web")[0].Labels[release.AddressLabel]; got != "release.old" {
		t.Fatalf("the record's address label is %q, want release.old", got)
	}

	rewriteStack(t, dir, head+block("new")+"moved {\n  from = release.old\n  to   = release.new\n}\n")
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 0 || !strings.Contains(out, "release.old has moved to release.new") || !strings.Contains(out, "0 to install, 0 to upgrade, 0 to uninstall") {
		t.Fatalf("plan after the move: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--json")
	if code != 0 || !strings.Contains(out, `"moved_from": "release.old"`) {
		t.Fatalf("plan --json: exit %d\n%s", code, out)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply of the move: exit %d\n%s\n%s", code, out, errOut)
	}
	h := statusOf(t, ns, "web")
	if revisions(h) != "1:deployed" {
		t.Fatalf("after the move: %s, want one revision", revisions(h))
	}
	if got := h[0].Labels[release.AddressLabel]; got != "release.new" {
		t.Fatalf("the record's address label is %q after the move, want release.new", got)
	}
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 0 || strings.Contains(out, "has moved") {
		t.Fatalf("plan after applying the move: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestRemovedDestroyFalse: a removed block with destroy = false stops the
// stack managing a release, and nothing else: no uninstall, no revision,
// the objects stay, the records lose the stack's label, and another stack
// declares the release without adopt_from_stack.
func TestRemovedDestroyFalse(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	stack := "rm-" + ns[len(ns)-6:]
	head := fmt.Sprintf("stack %q {\n  default_namespace = %q\n}\n", stack, ns)
	web := fmt.Sprintf("release \"renamed\" {\n  name  = \"web2\"\n  chart = %q\n}\n", appChart(t))
	dir := writeStack(t, head+web)
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply exit %d\n%s\n%s", code, out, errOut)
	}
	dep, err := cluster.Client().AppsV1().Deployments(ns).Get(context.Background(), "web2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	rewriteStack(t, dir, head+"removed {\n  from    = release.renamed\n  destroy = false\n}\n")
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	want := fmt.Sprintf("release.renamed will no longer be managed by stack %q; its objects and Helm release stay", stack)
	if code != 2 || !strings.Contains(out, want) || !strings.Contains(out, "0 to uninstall") || strings.Contains(out, "- apps/v1 Deployment") {
		t.Fatalf("plan of the removed block: exit %d, want 2 and %q\n%s\n%s", code, want, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply of the removed block: exit %d\n%s\n%s", code, out, errOut)
	}
	h := statusOf(t, ns, "web2")
	if revisions(h) != "1:deployed" {
		t.Fatalf("after forgetting: %s, want revision 1 deployed", revisions(h))
	}
	for _, r := range h {
		if v, ok := r.Labels[release.StackLabel]; ok {
			t.Fatalf("revision %d still carries %s=%s", r.Version, release.StackLabel, v)
		}
	}
	if out, err := cluster.Helm(t, "status", "web2", "-n", ns); err != nil || !strings.Contains(out, "deployed") {
		t.Fatalf("helm status web2: %v\n%s", err, out)
	}
	after, err := cluster.Client().AppsV1().Deployments(ns).Get(context.Background(), "web2", metav1.GetOptions{})
	if err != nil || after.UID != dep.UID {
		t.Fatalf("the Deployment did not stay: %v", err)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after forgetting: exit %d\n%s\n%s", code, out, errOut)
	}

	// Another stack declares the release: planned, not refused.
	other := writeStack(t, fmt.Sprintf("stack \"other-%s\" {\n  default_namespace = %q\n}\n", ns[len(ns)-6:], ns)+
		fmt.Sprintf("release \"web\" {\n  name  = \"web2\"\n  chart = %q\n}\n", appChart(t)))
	code, out, errOut = runConvoy(t, "plan", "-C", other, "--kubeconfig", kc, "--detailed-exitcode")
	if code == 1 || strings.Contains(out, "refused") || strings.Contains(errOut, "refuse") {
		t.Fatalf("a second stack's plan of the forgotten release: exit %d\n%s\n%s", code, out, errOut)
	}
}
