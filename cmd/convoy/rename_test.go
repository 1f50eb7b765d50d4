package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// renameableChart is our chart for renames: its Deployment is named by
// fullnameOverride (it keeps its identity across a rename), its
// ConfigMap after the release (it is replaced).
func renameableChart(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "charts", "renameable"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// renameBlock is a release block of the renameable chart.
func renameBlock(t *testing.T, addr, name, extra string) string {
	return fmt.Sprintf("release %q {\n  name   = %q\n  chart  = %q\n  values = [{ fullnameOverride = \"web\" }]\n%s}\n", addr, name, renameableChart(t), extra)
}

// hooked is a release block of the renameable chart with its hooks on.
func hooked(t *testing.T, addr, name string) string {
	return strings.Replace(renameBlock(t, addr, name, ""), `fullnameOverride = "web"`, `fullnameOverride = "web", hooks = true`, 1)
}

// TestMoveRenameForget is issue 24's acceptance chain: release.old (Helm
// name web) moves to release.new with the same name (applied from a
// saved plan), then to release.renamed with the name web2 (a rename: the
// Deployment keeps its uid, the history moves), then a removed block
// with destroy = false forgets it, and another stack may take it.
func TestMoveRenameForget(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	ctx := context.Background()
	head := fmt.Sprintf("stack \"rn-%s\" {\n  default_namespace = %q\n}\n", ns[len(ns)-6:], ns)
	dir := writeStack(t, head+hooked(t, "old", "web"))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply exit %d\n%s\n%s", code, out, errOut)
	}
	dep, err := cluster.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// 1. Same name, new address, applied from a saved plan.
	rewriteStack(t, dir, head+hooked(t, "new", "web")+"moved {\n  from = release.old\n  to   = release.new\n}\n")
	planFile := filepath.Join(t.TempDir(), "move.plan")
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--out", planFile)
	if code != 0 || !strings.Contains(out, "release.old has moved to release.new") || !strings.Contains(out, "0 to install, 0 to upgrade, 0 to uninstall") {
		t.Fatalf("plan of the move: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, planFile); code != 0 {
		t.Fatalf("apply of the saved plan: exit %d\n%s\n%s", code, out, errOut)
	}
	h := statusOf(t, ns, "web")
	if revisions(h) != "1:deployed" || h[0].Labels[release.AddressLabel] != "release.new" {
		t.Fatalf("after the move from a saved plan: %s, address %q; want one revision at release.new", revisions(h), h[0].Labels[release.AddressLabel])
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after the move: exit %d\n%s\n%s", code, out, errOut)
	}

	// 2. A new Helm name: a rename.
	moves := "moved {\n  from = release.old\n  to   = release.new\n}\nmoved {\n  from = release.new\n  to   = release.renamed\n}\n"
	rewriteStack(t, dir, head+hooked(t, "renamed", "web2")+moves)
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	for _, want := range []string{
		"release.new (web) will be renamed to release.renamed (web2)",
		"0 to install, 1 to upgrade, 0 to uninstall",
		"Renamed: 1.",
		fmt.Sprintf("apps/v1 Deployment %s/web keeps its identity", ns),
		fmt.Sprintf("v1 ConfigMap %s/web-settings is replaced by v1 ConfigMap %s/web2-settings", ns, ns),
	} {
		if code != 2 || !strings.Contains(out, want) {
			t.Fatalf("plan of the rename: exit %d, want 2 and %q\n%s\n%s", code, want, out, errOut)
		}
	}
	code, out, _ = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--json")
	if code != 0 || !strings.Contains(out, `"from_name": "web"`) || !strings.Contains(out, `"state": "not-started"`) || strings.Contains(out, `"action": "uninstall"`) {
		t.Fatalf("plan --json of the rename: exit %d\n%s", code, out)
	}
	code, out, _ = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--markdown")
	if code != 0 || !strings.Contains(out, "`release.new` (`web`) will be renamed to `release.renamed` (`web2`)") {
		t.Fatalf("plan --markdown of the rename: exit %d\n%s", code, out)
	}
	// Applied from a saved plan: verified against the old release's
	// records.
	renamePlan := filepath.Join(t.TempDir(), "rename.plan")
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--out", renamePlan); code != 0 {
		t.Fatalf("plan --out of the rename: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, renamePlan); code != 0 {
		t.Fatalf("apply of the rename: exit %d\n%s\n%s", code, out, errOut)
	}
	after, err := cluster.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil || after.UID != dep.UID {
		t.Fatalf("the Deployment did not keep its identity: %v", err)
	}
	if got := after.Annotations["meta.helm.sh/release-name"]; got != "web2" {
		t.Fatalf("the Deployment is annotated meta.helm.sh/release-name: %q, want web2", got)
	}
	if got := after.Labels["app.kubernetes.io/instance"]; got != "web2" {
		t.Fatalf("the Deployment's app.kubernetes.io/instance is %q, as the chart renders it: want web2", got)
	}
	if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(ctx, "web2-settings", metav1.GetOptions{}); err != nil {
		t.Fatalf("the new ConfigMap: %v", err)
	}
	// Hooks as an upgrade: pre-upgrade ran, pre-install did not.
	if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(ctx, "web2-pre-upgrade", metav1.GetOptions{}); err != nil {
		t.Fatalf("the rename did not run the pre-upgrade hook: %v", err)
	}
	if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(ctx, "web2-pre-install", metav1.GetOptions{}); err == nil {
		t.Fatal("the rename ran the pre-install hook")
	}
	if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(ctx, "web-settings", metav1.GetOptions{}); err == nil {
		t.Fatal("the old ConfigMap web-settings was not deleted")
	}
	if h := statusOf(t, ns, "web"); len(h) != 0 {
		t.Fatalf("records of web remain: %s", revisions(h))
	}
	h = statusOf(t, ns, "web2")
	if revisions(h) != "1:superseded 2:deployed" || h[0].Labels[release.RenamedFromLabel] != "web" || h[1].Labels[release.AddressLabel] != "release.renamed" {
		t.Fatalf("web2's history: %s, labels %v", revisions(h), h[len(h)-1].Labels)
	}
	if !strings.HasPrefix(h[0].Info.Description, "Renamed from web (revision 1)") {
		t.Fatalf("the copied revision's description: %q", h[0].Info.Description)
	}
	hist, err := cluster.Helm(t, "history", "web2", "-n", ns)
	if err != nil || !strings.Contains(hist, "Renamed from web (revision 1)") || !strings.Contains(hist, "Upgrade complete") {
		t.Fatalf("helm history web2: %v\n%s", err, hist)
	}
	list, err := cluster.Helm(t, "list", "-n", ns, "-q")
	if err != nil || strings.TrimSpace(list) != "web2" {
		t.Fatalf("helm list: %v\n%q, want only web2", err, list)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 || strings.Contains(out, "renamed") {
		t.Fatalf("plan after the rename: exit %d\n%s\n%s", code, out, errOut)
	}

	// 3. Forgotten after the rename.
	stack := "rn-" + ns[len(ns)-6:]
	rewriteStack(t, dir, head+"removed {\n  from    = release.renamed\n  destroy = false\n}\n")
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	want := fmt.Sprintf("release.renamed will no longer be managed by stack %q; its objects and Helm release stay", stack)
	if code != 2 || !strings.Contains(out, want) || !strings.Contains(out, "0 to uninstall") {
		t.Fatalf("plan of the removed block: exit %d, want 2 and %q\n%s\n%s", code, want, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply of the removed block: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, r := range statusOf(t, ns, "web2") {
		if v, ok := r.Labels[release.StackLabel]; ok {
			t.Fatalf("revision %d still carries %s=%s", r.Version, release.StackLabel, v)
		}
	}
	if out, err := cluster.Helm(t, "status", "web2", "-n", ns); err != nil || !strings.Contains(out, "deployed") {
		t.Fatalf("helm status web2: %v\n%s", err, out)
	}
	if d, err := cluster.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil || d.UID != dep.UID {
		t.Fatalf("the Deployment did not stay: %v", err)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after forgetting: exit %d\n%s\n%s", code, out, errOut)
	}
	other := writeStack(t, fmt.Sprintf("stack \"other-%s\" {\n  default_namespace = %q\n}\n", ns[len(ns)-6:], ns)+renameBlock(t, "web", "web2", ""))
	code, out, errOut = runConvoy(t, "plan", "-C", other, "--kubeconfig", kc, "--detailed-exitcode")
	if code == 1 || strings.Contains(out, "refused") || strings.Contains(errOut, "refuse") {
		t.Fatalf("a second stack's plan of the forgotten release: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestRenameRefusals: a moved block whose release moves to another
// namespace under a new name, or onto a release that exists, is a
// diagnostic at the block.
func TestRenameRefusals(t *testing.T) {
	ns := cluster.Namespace(t)
	other := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	head := fmt.Sprintf("stack \"rx-%s\" {\n  default_namespace = %q\n}\n", ns[len(ns)-6:], ns)
	dir := writeStack(t, head+renameBlock(t, "old", "web", ""))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply exit %d\n%s\n%s", code, out, errOut)
	}
	rewriteStack(t, dir, head+renameBlock(t, "new", "web2", fmt.Sprintf("  namespace = %q\n", other))+"\nmoved {\n  from = release.old\n  to   = release.new\n}\n")
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "stack.hcl line 11") || !strings.Contains(errOut, "Rename across namespaces") {
		t.Fatalf("plan of a rename across namespaces: exit %d, want 1 and the block's line\n%s\n%s", code, out, errOut)
	}

	// Onto a release helm installed: never overwritten.
	if out, err := cluster.Helm(t, "install", "web2", renameableChart(t), "-n", ns, "--set", "fullnameOverride=other"); err != nil {
		t.Fatalf("helm install web2: %v\n%s", err, out)
	}
	rewriteStack(t, dir, head+renameBlock(t, "new", "web2", "")+"\nmoved {\n  from = release.old\n  to   = release.new\n}\n")
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "stack.hcl line 10") || !strings.Contains(errOut, "Rename onto an existing release") {
		t.Fatalf("plan of a rename onto an existing release: exit %d, want 1 and the block's line\n%s\n%s", code, out, errOut)
	}
}

// TestDestroyBeforeRename: destroying a stack whose rename is planned but
// not applied uninstalls the release under its old name.
func TestDestroyBeforeRename(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	head := fmt.Sprintf("stack \"rd-%s\" {\n  default_namespace = %q\n}\n", ns[len(ns)-6:], ns)
	dir := writeStack(t, head+renameBlock(t, "old", "web", ""))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply exit %d\n%s\n%s", code, out, errOut)
	}
	rewriteStack(t, dir, head+renameBlock(t, "new", "web2", "")+"moved {\n  from = release.old\n  to   = release.new\n}\n")
	if code, out, errOut := runConvoy(t, "destroy", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("destroy exit %d\n%s\n%s", code, out, errOut)
	}
	if h := statusOf(t, ns, "web"); len(h) != 0 {
		t.Fatalf("web after destroy: %s", revisions(h))
	}
	if d, err := cluster.Client().AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{}); err == nil && d.DeletionTimestamp == nil {
		t.Fatal("the Deployment web survived destroy")
	}
}

// TestRenameInterrupted: a rename stopped after the history copy, then
// SIGKILLed while its new revision waits: each time the next plan says
// how far it got, and apply finishes it.
func TestRenameInterrupted(t *testing.T) {
	cluster.Need(t)
	bin := buildConvoy(t)
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	ctx := context.Background()
	head := fmt.Sprintf("stack \"ri-%s\" {\n  default_namespace = %q\n}\n", ns[len(ns)-6:], ns)
	dir := writeStack(t, head+renameBlock(t, "old", "web", ""))
	if code, out, errOut := runBin(bin, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply exit %d\n%s\n%s", code, out, errOut)
	}
	moved := "moved {\n  from = release.old\n  to   = release.new\n}\n"
	slow := "  values = [{ fullnameOverride = \"web\", readyAfter = \"10m\" }]\n  timeout = \"15m\"\n"
	rewriteStack(t, dir, head+strings.Replace(renameBlock(t, "new", "web2", ""), "  values = [{ fullnameOverride = \"web\" }]\n", slow, 1)+moved)

	// Stopped after the copy: what a run killed between the copy and the
	// new revision leaves.
	eng, err := release.NewEngine(ctx, cluster.RESTConfig(), release.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Storage(ns).CopyHistory(ctx, "web", "web2", map[string]string{release.AddressLabel: "release.new"}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runBin(bin, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 0 || !strings.Contains(out, "rename of web interrupted: history copied (1 of 1 revisions), old records remain") || !strings.Contains(out, "0 to install, 1 to upgrade, 0 to uninstall") {
		t.Fatalf("plan after the copy: exit %d\n%s\n%s", code, out, errOut)
	}

	// Killed while the new revision waits for its pods.
	cmd := exec.Command(bin, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress")
	var killed bytes.Buffer
	cmd.Stdout, cmd.Stderr = &killed, &killed
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var h []*release.Release
	devtest.Eventually(t, 2*time.Minute, func() bool {
		h = statusOf(t, ns, "web2")
		return len(h) == 2 && h[1].Info.Status.IsPending()
	}, func() string {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Sprintf("no pending revision 2 of web2 within 2 minutes: %s\n%s", revisions(h), killed.String())
	})
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if h := statusOf(t, ns, "web"); revisions(h) != "1:deployed" {
		t.Fatalf("web after the kill: %s, want its record", revisions(h))
	}
	// The replaced ConfigMap serves until the new release is ready.
	if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(ctx, "web-settings", metav1.GetOptions{}); err != nil {
		t.Fatalf("the old ConfigMap was deleted before the new release was ready: %v", err)
	}
	code, out, errOut = runBin(bin, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 0 || !strings.Contains(out, "rename of web interrupted: revision 2 (pending-upgrade) written under the new name, old records remain") {
		t.Fatalf("plan after the kill: exit %d\n%s\n%s", code, out, errOut)
	}

	// Finished by the next apply (pods ready at once now).
	rewriteStack(t, dir, head+renameBlock(t, "new", "web2", "")+moved)
	if code, out, errOut := runBin(bin, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply after the kill: exit %d\n%s\n%s", code, out, errOut)
	}
	if h := statusOf(t, ns, "web"); len(h) != 0 {
		t.Fatalf("records of web remain: %s", revisions(h))
	}
	if h := statusOf(t, ns, "web2"); revisions(h) != "1:superseded 2:failed 3:deployed" {
		t.Fatalf("web2's history: %s", revisions(h))
	}
	if code, out, errOut := runBin(bin, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after finishing: exit %d\n%s\n%s", code, out, errOut)
	}

	// Stopped after the new revision was deployed, before the old records
	// were deleted: the old records are back (as such a run leaves them).
	if _, err := eng.Storage(ns).CopyHistory(ctx, "web2", "web", map[string]string{release.AddressLabel: "release.old"}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runBin(bin, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "rename of web interrupted: revision 3 (deployed) written under the new name, old records remain") ||
		!strings.Contains(out, "release.new (finish rename)") || !strings.Contains(out, "0 to install, 0 to upgrade, 0 to uninstall") {
		t.Fatalf("plan with the old records left: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runBin(bin, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply finishing the rename: exit %d\n%s\n%s", code, out, errOut)
	}
	if h := statusOf(t, ns, "web"); len(h) != 0 {
		t.Fatalf("records of web remain: %s", revisions(h))
	}
	if h := statusOf(t, ns, "web2"); revisions(h) != "1:superseded 2:failed 3:deployed" {
		t.Fatalf("web2's history after finishing: %s", revisions(h))
	}
	if code, out, errOut := runBin(bin, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after finishing: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestRenameAHelmInstalledRelease: a release helm installed, declared
// under a new name with a moved block from its default address, is
// renamed with its history; a release helm installs under the old name
// afterwards is another, and the moved block never touches it.
func TestRenameAHelmInstalledRelease(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	ctx := context.Background()
	if out, err := cluster.Helm(t, "install", "web", renameableChart(t), "-n", ns, "--set", "fullnameOverride=web"); err != nil {
		t.Fatalf("helm install web: %v\n%s", err, out)
	}
	dep, err := cluster.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("stack \"rh-%s\" {\n  default_namespace = %q\n}\n", ns[len(ns)-6:], ns)
	dir := writeStack(t, head+renameBlock(t, "new", "web2", "  adopt = true\n")+"moved {\n  from = release.web\n  to   = release.new\n}\n")
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "release.web (web) will be renamed to release.new (web2)") || !strings.Contains(out, "0 to install, 1 to upgrade, 0 to uninstall") {
		t.Fatalf("plan of the rename: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply of the rename: exit %d\n%s\n%s", code, out, errOut)
	}
	if after, err := cluster.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil || after.UID != dep.UID || after.Annotations["meta.helm.sh/release-name"] != "web2" {
		t.Fatalf("the Deployment after the rename: %v", err)
	}
	hist, err := cluster.Helm(t, "history", "web2", "-n", ns)
	if err != nil || !strings.Contains(hist, "Renamed from web (revision 1): Install complete") {
		t.Fatalf("helm history web2: %v\n%s", err, hist)
	}
	if list, err := cluster.Helm(t, "list", "-n", ns, "-q"); err != nil || strings.TrimSpace(list) != "web2" {
		t.Fatalf("helm list: %v\n%q, want only web2", err, list)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after the rename: exit %d\n%s\n%s", code, out, errOut)
	}

	if out, err := cluster.Helm(t, "install", "web", renameableChart(t), "-n", ns, "--set", "fullnameOverride=another"); err != nil {
		t.Fatalf("helm install web again: %v\n%s", err, out)
	}
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "Release renamed already") {
		t.Fatalf("plan with another release named web: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if h := statusOf(t, ns, "web"); revisions(h) != "1:deployed" {
		t.Fatalf("the other web: %s", revisions(h))
	}
}

// TestRenameSIGKILLedAnywhereFinishes kills `convoy apply` of a rename at
// random points (before the lock, during the copy, the upgrade and its
// wait, the deletion of the old records, after the end), trials times:
// each time the next apply finishes the rename — no record of web, web2's
// history whole and deployed, the Deployment's uid kept, the next plan
// empty.
func TestRenameSIGKILLedAnywhereFinishes(t *testing.T) {
	cluster.Need(t)
	const trials = 8
	bin := buildConvoy(t)
	kc := cluster.Kubeconfig()
	ctx := context.Background()
	moved := "moved {\n  from = release.old\n  to   = release.new\n}\n"
	slow := strings.Replace(renameBlock(t, "new", "web2", ""), `fullnameOverride = "web"`, `fullnameOverride = "web", readyAfter = "1s"`, 1)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	var full time.Duration
	for i := 0; i < trials; i++ {
		ns := cluster.Namespace(t)
		head := fmt.Sprintf("stack \"rk-%s\" {\n  default_namespace = %q\n}\n", ns[len(ns)-6:], ns)
		dir := writeStack(t, head+renameBlock(t, "old", "web", ""))
		args := []string{"apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"}
		if code, out, errOut := runBin(bin, args...); code != 0 {
			t.Fatalf("trial %d: install: %d\n%s\n%s", i, code, out, errOut)
		}
		dep, err := cluster.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rewriteStack(t, dir, head+slow+moved)
		var after time.Duration
		left := "not killed"
		if i == 0 {
			// The first trial runs to the end: how long a rename takes.
			t0 := time.Now()
			if code, out, errOut := runBin(bin, args...); code != 0 {
				t.Fatalf("trial 0: rename: %d\n%s\n%s", code, out, errOut)
			}
			full = time.Since(t0)
		} else {
			after = time.Duration(rng.Int64N(int64(full * 5 / 4)))
			cmd := exec.Command(bin, args...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(after) // where the kill lands, not a wait for a result
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			left = fmt.Sprintf("left web [%s] web2 [%s]", revisions(statusOf(t, ns, "web")), revisions(statusOf(t, ns, "web2")))
			if code, out, errOut := runBin(bin, args...); code != 0 {
				t.Fatalf("trial %d (killed after %s, seed %d): the next apply: %d\n%s\n%s", i, after, seed, code, out, errOut)
			}
		}
		if h := statusOf(t, ns, "web"); len(h) != 0 {
			t.Fatalf("trial %d (killed after %s, seed %d): records of web remain: %s", i, after, seed, revisions(h))
		}
		h := statusOf(t, ns, "web2")
		for j, r := range h {
			if r.Version != j+1 || r.Info.Status.IsPending() {
				t.Fatalf("trial %d (killed after %s, seed %d): web2's history %s", i, after, seed, revisions(h))
			}
		}
		if len(h) < 2 || h[0].Labels[release.RenamedFromLabel] != "web" || h[len(h)-1].Info.Status != release.StatusDeployed {
			t.Fatalf("trial %d (killed after %s, seed %d): web2's history %s", i, after, seed, revisions(h))
		}
		if d, err := cluster.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil || d.UID != dep.UID {
			t.Fatalf("trial %d (killed after %s, seed %d): the Deployment did not keep its identity: %v", i, after, seed, err)
		}
		if code, out, errOut := runBin(bin, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
			t.Fatalf("trial %d (killed after %s, seed %d): plan after: exit %d\n%s\n%s", i, after, seed, code, out, errOut)
		}
		t.Logf("trial %d: killed after %s, %s; then web2 %s", i, after.Round(time.Millisecond), left, revisions(h))
	}
	t.Logf("a rename takes %s; seed %d", full.Round(time.Millisecond), seed)
}
