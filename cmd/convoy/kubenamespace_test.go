package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

// Without -n, convoy approve and convoy get stacks work in the kubeconfig
// context's namespace, as kubectl does, not in "default".
func TestStackCommandsUseTheContextNamespace(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := contextKubeconfig(t, ns)
	c, err := ctl.NewClient(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Install(context.Background(), c, ctl.InstallRequest{MinInterval: time.Second}); err != nil {
		t.Fatal(err)
	}
	st := &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns}, Spec: v1alpha1.StackSpec{Source: "oci://127.0.0.1:1/stacks/shop:v1"}}
	if err := c.Create(context.Background(), st); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runConvoy(t, "get", "stacks", "--kubeconfig", kc)
	if code != 0 || !strings.Contains(out, ns+" ") || !strings.Contains(out, "shop") {
		t.Fatalf("get stacks: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runConvoy(t, "approve", "nope", "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "Stack "+ns+"/nope not found") {
		t.Fatalf("approve: exit %d, want the context's namespace %s:\n%s", code, ns, errOut)
	}
	// -n still wins.
	code, _, errOut = runConvoy(t, "approve", "nope", "-n", "elsewhere", "--kubeconfig", kc)
	if code != 1 || !strings.Contains(errOut, "Stack elsewhere/nope not found") {
		t.Fatalf("approve -n elsewhere: exit %d\n%s", code, errOut)
	}
}

// contextKubeconfig writes the devcluster's kubeconfig with its current
// context's namespace set to ns.
func contextKubeconfig(t *testing.T, ns string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts[cfg.CurrentContext].Namespace = ns
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	return kc
}
