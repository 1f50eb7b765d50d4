package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contexts writes a kubeconfig with one context per cluster, named as in
// kubeconfigs (context name → a kubeconfig of that cluster).
func contexts(t *testing.T, kubeconfigs map[string]string) string {
	t.Helper()
	merged := clientcmdapi.NewConfig()
	for name, path := range kubeconfigs {
		cfg, err := clientcmd.LoadFromFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cur := cfg.Contexts[cfg.CurrentContext]
		merged.Clusters[name] = cfg.Clusters[cur.Cluster]
		merged.AuthInfos[name] = cfg.AuthInfos[cur.AuthInfo]
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*merged, kc); err != nil {
		t.Fatal(err)
	}
	return kc
}

// TestReleasesOnTwoClustersInOneRun applies a stack whose releases target
// two clusters (two contexts of one kubeconfig): each lands on its own.
func TestReleasesOnTwoClustersInOneRun(t *testing.T) {
	cluster.Need(t)
	tools := devtest.Tools(t)
	second, err := devcluster.Start(context.Background(), devcluster.Options{Tools: tools, Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Stop()

	kc := contexts(t, map[string]string{"one": cluster.Kubeconfig(), "two": second.Kubeconfig()})
	ns := "multi-" + strings.TrimPrefix(cluster.Namespace(t), "t-")[len("testreleasesontwoclustersinonerun-"):]
	dir := writeStack(t, fmt.Sprintf(`
stack %[3]q {
  default_namespace = %[3]q
}
cluster "one" {
  kubeconfig = %[2]q
  context    = "one"
}
cluster "two" {
  kubeconfig = %[2]q
  context    = "two"
}
release "east" {
  chart            = %[1]q
  cluster          = cluster.one
  create_namespace = true
}
release "west" {
  chart            = %[1]q
  cluster          = cluster.two
  create_namespace = true
  depends_on       = [release.east]
}
`, appChart(t), kc, ns))
	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--auto-approve", "--no-progress")
	if code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	for _, c := range []struct {
		name    string
		cluster interface{ Kubeconfig() string }
		want    map[string]bool
	}{
		{"one", cluster, map[string]bool{"east": true, "west": false}},
		{"two", second, map[string]bool{"east": false, "west": true}},
	} {
		cfg, err := clientcmd.BuildConfigFromFlags("", c.cluster.Kubeconfig())
		if err != nil {
			t.Fatal(err)
		}
		e, err := release.NewEngine(context.Background(), cfg, release.EngineOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for rel, want := range c.want {
			h, err := e.Storage(ns).History(context.Background(), rel)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(h) == 1 && h[0].Info.Status == release.StatusDeployed; got != want {
				t.Errorf("cluster %s: release %s deployed=%v, want %v", c.name, rel, got, want)
			}
		}
	}
}

// TestSensitiveCanaryNeverPrinted runs plan in every format and a failing
// apply with a sensitive value that also ends up in a template error: the
// value must not appear in any output.
func TestSensitiveCanaryNeverPrinted(t *testing.T) {
	const canary = "CANARY-7d1e-never-print"
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	stack := func(failing bool) string {
		s := fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
variable "secret" {
  sensitive = true
  default   = %[3]q
}
release "ok" {
  chart         = %[1]q
  set_sensitive = { "message" = var.secret }
}
`, appChart(t), ns, canary)
		if failing {
			s += fmt.Sprintf("release \"bad\" {\n  chart  = %q\n  values = [{ failWith = var.secret }]\n}\n", appChart(t))
		}
		return s
	}
	dir := writeStack(t, stack(false))
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
	if code := run("apply", "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply: exit %d\n%s", code, all.String())
	}
	// The value really is deployed (so the test could see it leak).
	if d, ok := cmData(t, ns, "ok-config"); !ok || d["message"] != canary {
		t.Fatalf("canary not deployed: %v", d)
	}
	if code := run("status"); code != 0 {
		t.Fatalf("status: %d", code)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack(true)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run("plan"); code == 0 {
		t.Fatal("plan of a failing template succeeded")
	}
	if code := run("apply", "--auto-approve", "--no-progress"); code == 0 {
		t.Fatal("apply of a failing template succeeded")
	}
	if strings.Contains(all.String(), canary) {
		t.Fatalf("the sensitive canary was printed:\n%s", all.String())
	}
	if !strings.Contains(all.String(), "refusing to render") {
		t.Fatalf("the template error was not reported at all:\n%s", all.String())
	}
}

// TestGivingUpOnOneClusterAppliesTheOther cuts the second of two
// clusters in the middle of an apply, after the plan read it and while a
// release of the first is being waited for: the first cluster's releases
// that do not need the second are applied, the one that depends on a
// release of the second is not, and the run fails naming the server it
// gave up on (Terraform's way: what does not depend on a failure goes
// on). Release here starts only after cluster two was given up on (it
// waits for slow, ready 8 s after first, while there gives up 3 s after
// first): a run that stopped everything at the give-up would not apply
// it.
func TestGivingUpOnOneClusterAppliesTheOther(t *testing.T) {
	cluster.Need(t)
	second, err := devcluster.Start(context.Background(), devcluster.Options{Tools: devtest.Tools(t), Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Stop()
	// Cluster two is reached through a proxy the test cuts.
	proxy := startTCPProxy(t, strings.TrimPrefix(second.RESTConfig().Host, "https://"))
	viaProxy := kubeconfigOfVia(t, second.Kubeconfig(), "https://"+proxy.Addr())
	kc := contexts(t, map[string]string{"one": cluster.Kubeconfig(), "two": viaProxy})

	// first and slow: a Deployment ready 8 s after it is created
	// (renameable's readyAfter), so the apply waits on each.
	slow := renameableChart(t)
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[3]q {
  default_namespace = %[3]q
}
cluster "one" {
  kubeconfig = %[2]q
  context    = "one"
}
cluster "two" {
  kubeconfig = %[2]q
  context    = "two"
}
release "first" {
  chart   = %[4]q
  cluster = cluster.one
  values  = [{ readyAfter = "8s" }]
  wait    = true
  timeout = "2m"
}
release "slow" {
  chart      = %[4]q
  cluster    = cluster.one
  values     = [{ readyAfter = "8s" }]
  wait       = true
  timeout    = "2m"
  depends_on = [release.first]
}
release "here" {
  chart      = %[1]q
  cluster    = cluster.one
  depends_on = [release.slow]
}
release "there" {
  chart            = %[1]q
  cluster          = cluster.two
  create_namespace = true
  depends_on       = [release.first]
}
release "after" {
  chart      = %[1]q
  cluster    = cluster.one
  depends_on = [release.there]
}
`, appChart(t), kc, ns, slow))
	done := make(chan struct{})
	var code int
	var out, errOut strings.Builder
	go func() {
		defer close(done)
		code = execute(context.Background(), []string{"apply", "-C", dir, "--auto-approve", "--no-progress", "--unreachable-timeout", "3s"},
			streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	}()
	devtest.Eventually(t, time.Minute, func() bool {
		h := statusOf(t, ns, "first")
		return len(h) == 1 && h[0].Info.Status == release.StatusPendingInstall
	}, func() string { return "the apply never reached release first's wait" })
	proxy.Cut()
	cut := time.Now()
	<-done
	t.Logf("the apply ended %s after cluster two was cut", time.Since(cut).Round(100*time.Millisecond))

	if code != 1 || !strings.Contains(errOut.String(), proxy.Addr()) {
		t.Fatalf("apply with cluster two cut: exit %d, want 1 naming %s\n%s\n%s", code, proxy.Addr(), out.String(), errOut.String())
	}
	for rel, want := range map[string]string{"first": "1:deployed", "slow": "1:deployed", "here": "1:deployed", "after": ""} {
		if got := revisions(statusOf(t, ns, rel)); got != want {
			t.Errorf("release %s on cluster one: %q, want %q\n%s\n%s", rel, got, want, out.String(), errOut.String())
		}
	}
}
