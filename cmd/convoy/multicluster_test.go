package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

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

	merged := clientcmdapi.NewConfig()
	for name, path := range map[string]string{"one": cluster.Kubeconfig(), "two": second.Kubeconfig()} {
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
