package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestRenameAcrossClustersIsAnError: a moved block whose release moves
// to another cluster is a diagnostic at the block, and nothing is
// planned as uninstalled or installed.
func TestRenameAcrossClustersIsAnError(t *testing.T) {
	cluster.Need(t)
	second, err := devcluster.Start(context.Background(), devcluster.Options{Tools: devtest.Tools(t), Nodes: 1})
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
	ns := cluster.Namespace(t)
	head := fmt.Sprintf(`stack "rc-%[2]s" {
  default_namespace = %[3]q
}
cluster "one" {
  kubeconfig = %[1]q
  context    = "one"
}
cluster "two" {
  kubeconfig = %[1]q
  context    = "two"
}
release "stays" {
  name    = "stays"
  chart   = %[4]q
  cluster = cluster.one
}
`, kc, ns[len(ns)-6:], ns, renameableChart(t))
	block := func(addr, name, on string) string {
		return fmt.Sprintf("release %q {\n  name    = %q\n  chart   = %q\n  cluster = cluster.%s\n  create_namespace = true\n}\n", addr, name, renameableChart(t), on)
	}
	dir := writeStack(t, head+block("old", "web", "one"))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	rewriteStack(t, dir, head+block("new", "web2", "two")+"moved {\n  from = release.old\n  to   = release.new\n}\n")
	code, out, errOut := runConvoy(t, "plan", "-C", dir)
	if code != 1 || !strings.Contains(errOut, "Rename across clusters") || !strings.Contains(errOut, `on cluster "one", to release.new on cluster "two"`) || !strings.Contains(errOut, "stack.hcl line 23") {
		t.Fatalf("plan of a rename across clusters: exit %d, want 1 and the block's line\n%s\n%s", code, out, errOut)
	}
}
