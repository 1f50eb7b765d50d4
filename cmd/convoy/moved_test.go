package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
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

// TestMoveNotNotedAgainAfterHelmRollback is item 6 of issue 55: a move
// applied together with an upgrade writes revision 2 at the new address;
// `helm rollback` to revision 1 copies revision 1's labels, address
// included. The next plan does not say the release moved again.
func TestMoveNotNotedAgainAfterHelmRollback(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	head := fmt.Sprintf("stack \"mvrb-%s\" {\n  default_namespace = %q\n}\n", ns[len(ns)-6:], ns)
	block := func(addr, message string) string {
		return fmt.Sprintf("release %q {\n  name   = \"web\"\n  chart  = %q\n  values = [{ message = %q }]\n}\n", addr, appChart(t), message)
	}
	d := writeStack(t, head+block("old", "one"))
	run := func(what string, args ...string) (int, string) {
		t.Helper()
		code, out, errOut := runConvoy(t, append(args, "-C", d, "--kubeconfig", kc)...)
		if code != 0 && code != 2 {
			t.Fatalf("%s: exit %d\n%s\n%s", what, code, out, errOut)
		}
		return code, out
	}
	run("apply", "apply", "--auto-approve", "--no-progress")
	rewriteStack(t, d, head+block("new", "two")+"moved {\n  from = release.old\n  to   = release.new\n}\n")
	if _, out := run("plan of the move", "plan"); !strings.Contains(out, "release.old has moved to release.new") {
		t.Fatalf("the plan does not say the release moved:\n%s", out)
	}
	run("apply of the move", "apply", "--auto-approve", "--no-progress")
	if out, err := cluster.Helm(t, "rollback", "web", "1", "-n", ns); err != nil {
		t.Fatalf("helm rollback: %v\n%s", err, out)
	}
	h := statusOf(t, ns, "web")
	if got := h[len(h)-1].Labels[release.AddressLabel]; got != "release.old" {
		t.Fatalf("helm rollback wrote address %q, want release.old (the label of revision 1, which it copies)", got)
	}
	code, out := run("plan after helm rollback", "plan", "--detailed-exitcode")
	if strings.Contains(out, "has moved") {
		t.Fatalf("the move is noted again after helm rollback:\n%s", out)
	}
	if code != 2 || !strings.Contains(out, "1 to upgrade") {
		t.Fatalf("plan after helm rollback: exit %d, want the upgrade back to message two\n%s", code, out)
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

// TestCountAddedIsRecorded is item 7 of issue 37: count added to a release
// block moves release.podinfo to release.podinfo[0], which keeps its Helm
// name. Applying the move (from a saved plan) writes the new address on
// the record, so the next plan says nothing of it; render, -l name= and
// promote give it the name plan and apply give it.
func TestCountAddedIsRecorded(t *testing.T) {
	base := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	t.Setenv("CONVOY_ENV", "")
	staging, production := base+"-staging", base+"-production"
	for _, ns := range []string{staging, production} {
		t.Cleanup(func() {
			_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		})
	}
	stack := func(count string) string {
		return fmt.Sprintf(`stack "cnt-%[1]s" {}
environment "staging" {}
environment "production" {}
release "podinfo" {
  chart            = %[2]q
  namespace        = "%[1]s-${environment.name}"
  create_namespace = true
%[3]s}
`, base, appChart(t), count)
	}
	dir := writeStack(t, stack(""))
	must := func(what string, want int, args ...string) string {
		t.Helper()
		code, out, errOut := runConvoy(t, args...)
		if code != want {
			t.Fatalf("%s: exit %d, want %d\n%s\n%s", what, code, want, out, errOut)
		}
		return out + errOut
	}
	for _, env := range []string{"staging", "production"} {
		must("apply "+env, 0, "apply", "-C", dir, "--kubeconfig", kc, "--env", env, "--auto-approve", "--no-progress")
	}

	rewriteStack(t, dir, stack("  count = 2\n"))
	planFile := filepath.Join(t.TempDir(), "count.plan")
	out := must("plan with count", 0, "plan", "-C", dir, "--kubeconfig", kc, "--env", "staging", "--out", planFile)
	if !strings.Contains(out, "moved from release.podinfo (count was added") {
		t.Fatalf("the plan does not say release.podinfo[0] moved:\n%s", out)
	}
	must("apply the saved plan", 0, "apply", planFile, "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress")
	h := statusOf(t, staging, "podinfo")
	if got := revisions(h); got != "1:deployed" {
		t.Fatalf("podinfo after the move: %s, want its one revision", got)
	}
	if got := h[0].Labels[release.AddressLabel]; got != "release.podinfo.0" {
		t.Fatalf("the record's address label is %q after the move, want release.podinfo.0 (release.podinfo[0])", got)
	}
	out = must("plan after the move", 0, "plan", "-C", dir, "--kubeconfig", kc, "--env", "staging", "--detailed-exitcode")
	if strings.Contains(out, "moved from") {
		t.Fatalf("the move is reported again after it was applied:\n%s", out)
	}

	// render names it as plan does, and -l name= selects it.
	out = must("render", 0, "render", "-C", dir, "--kubeconfig", kc, "--env", "staging")
	if !strings.Contains(out, "# Release: podinfo ("+staging+")") || strings.Contains(out, "podinfo-0") {
		t.Fatalf("render does not call release.podinfo[0] podinfo:\n%s", out)
	}
	out = must("render -l", 0, "render", "-C", dir, "--kubeconfig", kc, "--env", "staging", "-l", "name=podinfo")
	if !strings.Contains(out, "name: podinfo") {
		t.Fatalf("render -l name=podinfo rendered nothing:\n%s", out)
	}

	// promote reads staging's podinfo under its name.
	out = must("promote", 0, "promote", "--from-env", "staging", "--to-env", "production", "-C", dir, "--kubeconfig", kc, "--auto-approve")
	if strings.Contains(out, "podinfo-0") {
		t.Fatalf("promote names podinfo-0:\n%s", out)
	}
	if got := revisions(statusOf(t, production, "podinfo-1")); got != "1:deployed" {
		t.Fatalf("production podinfo-1: %s, want it promoted", got)
	}
	if got := statusOf(t, production, "podinfo")[len(statusOf(t, production, "podinfo"))-1].Labels[release.AddressLabel]; got != "release.podinfo.0" {
		t.Fatalf("production's podinfo record has address %q, want release.podinfo.0 (release.podinfo[0])", got)
	}
}
