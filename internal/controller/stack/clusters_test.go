package stack_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// spec.clusters gives a cluster block its kubeconfig from a Secret: the
// path the stack names means nothing where the controller runs.
func TestClusterKubeconfigFromSecret(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	dir := filepath.Join(t.TempDir(), "stack")
	appChart(t, filepath.Join(dir, "charts", "app"))
	hcl := fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
cluster "remote" {
  kubeconfig = "/nonexistent/kubeconfig"
}
release "api" {
  chart   = "./charts/app"
  cluster = cluster.remote
}
`, ns)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	push(t, reg, dir, "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", nil))
	startController(t, ns, nil)
	st := waitStack(t, c, ns, "shop", 60*time.Second, "failing", isCond("Ready", metav1.ConditionFalse, "PlanFailed"))
	if !strings.Contains(st.Status.LastError, `cluster "remote"`) {
		t.Fatalf("the error does not name the cluster block:%s", describe(st))
	}

	kc, err := os.ReadFile(cluster.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	create(t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "remote-kubeconfig", Namespace: ns}, Data: map[string][]byte{"value": kc}})
	update(t, c, ns, "shop", func(st *v1alpha1.Stack) {
		st.Spec.Clusters = []v1alpha1.ClusterRef{{Name: "remote", SecretRef: v1alpha1.SecretKeyRef{Name: "remote-kubeconfig", Key: "value"}}}
	})
	st = waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, ""))
	if revisionsOf(st) != "api:1:deployed" || st.Status.Releases[0].Cluster != "remote" {
		t.Fatalf("applied:%s", describe(st))
	}
	if m := configMessage(t, c, ns, "api"); m != "hello" {
		t.Fatalf("api message %q", m)
	}
}
