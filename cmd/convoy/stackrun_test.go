package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestHomeRelativeChartPath: chart = "~/..." resolves against the home
// directory in render, plan and apply, as it does in init.
func TestHomeRelativeChartPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if out, err := exec.Command("cp", "-r", appChart(t), filepath.Join(home, "app")).CombinedOutput(); err != nil {
		t.Fatalf("copy chart: %v %s", err, out)
	}
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "db" {
  chart  = "~/app"
  values = [{ message = "from-home" }]
}
`, ns))
	kc := cluster.Kubeconfig()
	if code, out, errOut := runConvoy(t, "render", "-C", dir); code != 0 || !strings.Contains(out, "from-home") {
		t.Fatalf("render: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 2 || !strings.Contains(out, "release.db (install)") {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if h := statusOf(t, ns, "db"); len(h) != 1 || h[0].Info.Status != "deployed" {
		t.Fatalf("db after apply: %s", revisions(h))
	}
}

// TestTwoClusterBlocksOnOneContextAreOneCluster: two cluster blocks (and
// the default cluster) that reach the same API server are one cluster. No
// release is planned as removed by the other, and the stack does not find
// itself locked.
func TestTwoClusterBlocksOnOneContextAreOneCluster(t *testing.T) {
	cluster.Need(t)
	// A second kubeconfig file with another context name for the same
	// server, so the blocks differ in every way but what they reach.
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cur := cfg.Contexts[cfg.CurrentContext]
	other := clientcmdapi.NewConfig()
	other.Clusters["same"] = cfg.Clusters[cur.Cluster]
	other.AuthInfos["same"] = cfg.AuthInfos[cur.AuthInfo]
	other.Contexts["alias"] = &clientcmdapi.Context{Cluster: "same", AuthInfo: "same"}
	other.CurrentContext = "alias"
	alias := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*other, alias); err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
cluster "a" {
  kubeconfig = %[3]q
}
cluster "b" {
  kubeconfig = %[4]q
  context    = "alias"
}
release "one" {
  chart   = %[1]q
  cluster = cluster.a
  values  = [{ message = "one" }]
}
release "two" {
  chart   = %[1]q
  cluster = cluster.b
  values  = [{ message = "two" }]
}
release "three" {
  chart  = %[1]q
  values = [{ message = "three" }]
}
`, appChart(t), ns, cluster.Kubeconfig(), alias))
	kc := cluster.Kubeconfig()
	for i := range 2 {
		code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress")
		if code != 0 || strings.Contains(out, "removed:") {
			t.Fatalf("apply %d: exit %d\n%s\n%s", i+1, code, out, errOut)
		}
	}
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 0 || strings.Contains(out, "removed:") {
		t.Fatalf("plan of the applied stack: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, name := range []string{"one", "two", "three"} {
		if h := statusOf(t, ns, name); len(h) != 1 || h[0].Info.Status != "deployed" {
			t.Fatalf("%s: %s", name, revisions(h))
		}
	}
}

// TestDiagnosticKnownOnlyAtApplyKeepsItsSource: a value that can be
// evaluated only once its dependency is applied, and fails then, is
// reported as a diagnostic with its file and line.
func TestDiagnosticKnownOnlyAtApplyKeepsItsSource(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "db" {
  chart  = %[1]q
  values = [{ message = "db" }]
}
release "web" {
  chart  = %[1]q
  values = [{ replicas = tonumber(release.db.status) }]
}
`, appChart(t), ns))
	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve", "--no-progress")
	if code == 0 {
		t.Fatalf("apply succeeded:\n%s", out)
	}
	stackFile := filepath.Join(dir, "stack.hcl")
	if !strings.Contains(out, "on "+stackFile+" line 11") || !strings.Contains(out, `tonumber(release.db.status)`) {
		t.Fatalf("the apply error does not point at %s line 11 with its source:\n%s\n%s", stackFile, out, errOut)
	}
	if _, err := os.Stat(stackFile); err != nil {
		t.Fatal(err)
	}
}
