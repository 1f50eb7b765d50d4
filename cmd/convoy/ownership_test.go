package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
)

// TestStacksDoNotCrossOverASharedRelease: two stacks declare release
// "shared" in one namespace. The second's plan says who owns it and its
// apply refuses; an explicit takeover (adopt_from_stack) shows in the plan
// and works; the first stack, once it drops the release from its files,
// does not uninstall what is now the second's.
func TestStacksDoNotCrossOverASharedRelease(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	suffix := ns[len(ns)-6:]
	teamY, teamX := "team-y-"+suffix, "team-x-"+suffix
	stack := func(name, body string) string {
		return fmt.Sprintf("stack %q {\n  default_namespace = %q\n}\n%s", name, ns, body)
	}
	shared := func(message, extra string) string {
		return fmt.Sprintf("release \"shared\" {\n  chart  = %q\n  values = [{ message = %q }]\n%s}\n", appChart(t), message, extra)
	}
	keep := fmt.Sprintf("release \"keep\" {\n  chart = %q\n}\n", appChart(t))
	dirY := writeStack(t, stack(teamY, shared("from-y", "")+keep))
	dirX := writeStack(t, stack(teamX, shared("from-x", "")))

	if code, out, errOut := runConvoy(t, "apply", "-C", dirY, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply of %s: %d\n%s\n%s", teamY, code, out, errOut)
	}

	// The other stack's plan says who owns it, and its apply refuses.
	code, out, errOut := runConvoy(t, "plan", "-C", dirX, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(out, fmt.Sprintf("! release.shared (refused: owned by stack %q)", teamY)) ||
		!strings.Contains(out, "Refused: 1 release owned by another stack") || !strings.Contains(errOut, fmt.Sprintf("adopt_from_stack = %q", teamY)) {
		t.Fatalf("plan of %s: exit %d\n%s\n%s", teamX, code, out, errOut)
	}
	code, out, errOut = runConvoy(t, "apply", "-C", dirX, "--kubeconfig", kc, "--auto-approve", "--no-progress")
	if code != 1 || !strings.Contains(errOut, fmt.Sprintf("is owned by stack %q (revision 1)", teamY)) {
		t.Fatalf("apply of %s: exit %d\n%s\n%s", teamX, code, out, errOut)
	}
	if h := statusOf(t, ns, "shared"); revisions(h) != "1:deployed" || h[0].Labels[release.StackLabel] != teamY {
		t.Fatalf("the refused apply changed the release: %s", revisions(h))
	}
	if d, _ := cmData(t, ns, "shared-config"); d["message"] != "from-y" {
		t.Fatalf("the refused apply changed the objects: %v", d)
	}

	// Taking it over is explicit, and shows in the plan.
	if err := os.WriteFile(filepath.Join(dirX, "stack.hcl"), []byte(stack(teamX, shared("from-x", fmt.Sprintf("  adopt_from_stack = %q\n", teamY)))), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runConvoy(t, "plan", "-C", dirX, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, fmt.Sprintf("~ release.shared (upgrade, adopted from stack %q)", teamY)) || !strings.Contains(out, "taken over from stack") {
		t.Fatalf("plan of the takeover: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dirX, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply of the takeover: exit %d\n%s\n%s", code, out, errOut)
	}
	h := statusOf(t, ns, "shared")
	if revisions(h) != "1:superseded 2:deployed" || h[1].Labels[release.StackLabel] != teamX {
		t.Fatalf("after the takeover: %s %v", revisions(h), h[len(h)-1].Labels)
	}

	// Now the first stack, without it in its files, leaves it alone.
	if err := os.WriteFile(filepath.Join(dirY, "stack.hcl"), []byte(stack(teamY, keep)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runConvoy(t, "apply", "-C", dirY, "--kubeconfig", kc, "--auto-approve", "--no-progress")
	if code != 0 || strings.Contains(out, "removed:") || strings.Contains(out, "(uninstall)") {
		t.Fatalf("apply of %s without the release: exit %d\n%s\n%s", teamY, code, out, errOut)
	}
	if h := statusOf(t, ns, "shared"); revisions(h) != "1:superseded 2:deployed" {
		t.Fatalf("%s uninstalled the release %s took over: %s", teamY, teamX, revisions(h))
	}
	// And it may not roll it back either.
	if err := os.WriteFile(filepath.Join(dirY, "stack.hcl"), []byte(stack(teamY, shared("from-y", "")+keep)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runConvoy(t, "rollback", "shared", "1", "-C", dirY, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, fmt.Sprintf("owned by stack %q", teamX)) {
		t.Fatalf("rollback by the former owner: exit %d\n%s", code, errOut)
	}
}

// TestRecoverAndRollbackRespectTheLockOfARunningApply: the single-release
// commands take the stack lock, so they refuse during an apply, naming it.
func TestRecoverAndRollbackRespectTheLockOfARunningApply(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "slow" {
  chart   = %[1]q
  values  = [{ neverReady = true }]
  wait    = true
  timeout = "8s"
}
`, appChart(t), ns))
	first := make(chan int)
	go func() {
		code, _, _ := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress")
		first <- code
	}()
	devtest.Eventually(t, 30*time.Second, func() bool {
		h := statusOf(t, ns, "slow")
		return len(h) == 1 && h[0].Info.Status == release.StatusPendingInstall
	}, func() string { return "the apply never recorded its revision" })
	for _, args := range [][]string{{"recover", "slow"}, {"rollback", "slow"}} {
		code, out, errOut := runConvoy(t, append(args, "-C", dir, "--kubeconfig", kc)...)
		if code != 1 || out != "" || !strings.Contains(errOut, fmt.Sprintf("stack %q is locked by", ns)) ||
			!strings.Contains(errOut, fmt.Sprintf("pid %d (convoy apply", os.Getpid())) || !strings.Contains(errOut, "convoy force-unlock ") {
			t.Errorf("%s during an apply: exit %d\n%s\n%s", args[0], code, out, errOut)
		}
	}
	if h := statusOf(t, ns, "slow"); len(h) != 1 || h[0].Info.Status != release.StatusPendingInstall {
		t.Fatalf("the apply's record was touched: %s", revisions(h))
	}
	<-first
}

// fixedNameChart is a chart whose ConfigMap has the same name whatever the
// release: two releases of it in one namespace collide.
func fixedNameChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fixed")
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"Chart.yaml":          "apiVersion: v2\nname: fixed\nversion: 0.1.0\n",
		"templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared-settings\ndata:\n  owner: {{ .Release.Name | quote }}\n",
		"templates/mine.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-own\ndata: {}\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestObjectsOfAnotherReleaseAreRefusedAtPlan: a release that would apply
// an object another release owns is refused by the plan (exit 1, refused
// in JSON), naming the owner; take_ownership is suggested only when no
// stack owns that release (issue 21, item 4).
func TestObjectsOfAnotherReleaseAreRefusedAtPlan(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	chart := fixedNameChart(t)
	suffix := ns[len(ns)-6:]
	staging, prod := "obs-staging-"+suffix, "obs-prod-"+suffix
	stack := func(name, release, extra string) string {
		return fmt.Sprintf("stack %q {\n  default_namespace = %q\n}\nrelease %q {\n  chart = %q\n%s}\n", name, ns, release, chart, extra)
	}
	dirA := writeStack(t, stack(staging, "grafana", ""))
	if code, out, errOut := runConvoy(t, "apply", "-C", dirA, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply of %s: %d\n%s\n%s", staging, code, out, errOut)
	}
	dirB := writeStack(t, stack(prod, "grafana-prod", ""))
	code, out, errOut := runConvoy(t, "plan", "-C", dirB, "--kubeconfig", kc, "--detailed-exitcode")
	want := fmt.Sprintf("v1 ConfigMap %s/shared-settings is owned by release grafana (namespace %s, stack %q)", ns, ns, staging)
	if code != 1 || !strings.Contains(out, `! release.grafana-prod (refused: 1 object owned by other releases)`) ||
		!strings.Contains(out, want) || !strings.Contains(errOut, want) || strings.Contains(out+errOut, "take_ownership") {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runConvoy(t, "plan", "-C", dirB, "--kubeconfig", kc, "--json")
	if code != 1 || !strings.Contains(out, `"refused": true`) || !strings.Contains(out, `"owner_release": "grafana"`) || !strings.Contains(out, `"owner_stack": "`+staging+`"`) {
		t.Fatalf("plan --json: exit %d\n%s", code, out)
	}
	code, _, errOut = runConvoy(t, "apply", "-C", dirB, "--kubeconfig", kc, "--auto-approve", "--no-progress")
	if code != 1 || !strings.Contains(errOut, want) {
		t.Fatalf("apply: exit %d\n%s", code, errOut)
	}
	if h := statusOf(t, ns, "grafana-prod"); len(h) != 0 {
		t.Fatalf("the refused apply installed the release: %s", revisions(h))
	}

	// A release of helm's, which no stack owns: take_ownership is the way.
	ns2 := cluster.Namespace(t)
	if out, err := cluster.Helm(t, "install", "legacy", chart, "-n", ns2); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	other := func(extra string) string {
		return fmt.Sprintf("stack %q {\n  default_namespace = %q\n}\nrelease \"fresh\" {\n  chart = %q\n%s}\n", prod, ns2, chart, extra)
	}
	dirC := writeStack(t, other(""))
	code, out, errOut = runConvoy(t, "plan", "-C", dirC, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(out, fmt.Sprintf("is owned by release legacy (namespace %s); take_ownership = true in the release block adopts it", ns2)) {
		t.Fatalf("plan against helm's release: exit %d\n%s\n%s", code, out, errOut)
	}
	if err := os.WriteFile(filepath.Join(dirC, "stack.hcl"), []byte(other("  take_ownership = true\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dirC, "--kubeconfig", kc, "--detailed-exitcode"); code != 2 || strings.Contains(out, "(refused") {
		t.Fatalf("plan with take_ownership: exit %d\n%s\n%s", code, out, errOut)
	}
}
