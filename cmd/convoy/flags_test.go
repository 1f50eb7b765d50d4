package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// apply --target applies only the targets (Terraform's -target); a saved
// plan keeps its own.
func TestApplyTarget(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, threeTier(appChart(t), ns, "v1"))
	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--target", "release.db")
	if code != 0 || !strings.Contains(out, "Plan: 1 to install, 0 to upgrade") {
		t.Fatalf("apply --target: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := revisions(statusOf(t, ns, "db")); got != "1:deployed" {
		t.Fatalf("db: %s", got)
	}
	if h := statusOf(t, ns, "api"); len(h) != 0 {
		t.Fatalf("api was applied outside the target: %s", revisions(h))
	}
	if code, _, errOut := runConvoy(t, "apply", "plan.cvp", "--target", "release.db"); code != 1 || !strings.Contains(errOut, "a saved plan keeps the targets") {
		t.Fatalf("--target with a plan file: exit %d\n%s", code, errOut)
	}
}

// --kube-context (Helm's name) and --context are one flag.
func TestKubeContextFlag(t *testing.T) {
	cluster.Need(t)
	dir := writeStack(t, threeTier(appChart(t), "x", "v1"))
	for _, flag := range []string{"--kube-context", "--context"} {
		code, _, errOut := runConvoy(t, "status", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), flag, "no-such-context")
		if code != 1 || !strings.Contains(errOut, "no-such-context") {
			t.Errorf("%s: exit %d\n%s", flag, code, errOut)
		}
	}
}

// Helm's --qps and --burst-limit are --kube-qps and --kube-burst.
func TestHelmClientRateFlags(t *testing.T) {
	cmd := newStatusCmd(streams{})
	if err := cmd.ParseFlags([]string{"--qps", "7.5", "--burst-limit", "9"}); err != nil {
		t.Fatal(err)
	}
	if q, b := cmd.Flags().Lookup("kube-qps").Value.String(), cmd.Flags().Lookup("kube-burst").Value.String(); q != "7.5" || b != "9" {
		t.Fatalf("--qps 7.5 --burst-limit 9 left --kube-qps %s --kube-burst %s", q, b)
	}
}

// --rollback-on-failure (Helm 4's name) is --atomic.
func TestRollbackOnFailureIsAtomic(t *testing.T) {
	cmd := newApplyCmd(streams{})
	if err := cmd.ParseFlags([]string{"--rollback-on-failure"}); err != nil {
		t.Fatal(err)
	}
	if got := cmd.Flags().Lookup("atomic").Value.String(); got != "true" {
		t.Fatalf("--rollback-on-failure left --atomic %s", got)
	}
}

// plan --destroy (Terraform's plan -destroy) plans what destroy would do,
// changes nothing, and its saved plan applies as a destroy: dependents
// first, every release uninstalled.
func TestPlanDestroy(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, threeTier(appChart(t), ns, "v1"))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	planFile := filepath.Join(t.TempDir(), "destroy.cvp")
	code, out, errOut := runConvoy(t, "plan", "--destroy", "-C", dir, "--kubeconfig", kc, "--out", planFile, "--no-color")
	if code != 0 || !strings.Contains(out, "Plan: 3 to uninstall.") || !strings.Contains(out, "- release.api (uninstall)") {
		t.Fatalf("plan --destroy: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := revisions(statusOf(t, ns, "api")); got != "1:deployed" {
		t.Fatalf("plan --destroy changed api: %s", got)
	}
	code, out, errOut = runConvoy(t, "apply", planFile, "--kubeconfig", kc, "--auto-approve", "--no-progress")
	if code != 0 {
		t.Fatalf("apply of the destroy plan: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, name := range []string{"db", "api", "web"} {
		if h := statusOf(t, ns, name); len(h) != 0 {
			t.Errorf("%s still has records: %s", name, revisions(h))
		}
	}
	// web depends on api's name, api on db: db goes last.
	if i, j := strings.Index(errOut, "release.api: succeeded after"), strings.Index(errOut, "release.db: started"); i < 0 || j < i {
		t.Errorf("db uninstalled before api was:\n%s", errOut)
	}
}
