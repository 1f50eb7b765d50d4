package stack_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller/stack"
	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// helmRecords lists the release records in ns: "name:revision:status
// stack=…" each, sorted by the API server.
func helmRecords(t *testing.T, ns string) []corev1.Secret {
	t.Helper()
	l, err := cluster.Client().CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// waitGone waits until the Stack no longer exists.
func waitGone(t *testing.T, c client.Client, ns, name string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		var st v1alpha1.Stack
		err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &st)
		if apierrors.IsNotFound(err) {
			return time.Since(start)
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > timeout {
			t.Fatalf("Stack %s/%s still exists %s after its deletion (finalizers %v):%s", ns, name, timeout, st.Finalizers, describe(&st))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func deleteStack(t *testing.T, c client.Client, ns, name string) {
	t.Helper()
	st := &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Delete(context.Background(), st); err != nil {
		t.Fatal(err)
	}
}

func deploymentExists(t *testing.T, ns, name string) bool {
	t.Helper()
	_, err := cluster.Client().AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// Deleting a Stack with spec.prune uninstalls its releases, dependents
// first, then lets the Stack go.
func TestDeleteWithPruneUninstalls(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) { st.Spec.Prune = true }))
	startController(t, ns, nil)
	st := waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if !strings.Contains(strings.Join(st.Finalizers, ","), stack.Finalizer) {
		t.Fatalf("no finalizer %s: %v", stack.Finalizer, st.Finalizers)
	}
	deleteStack(t, c, ns, "shop")
	took := waitGone(t, c, ns, "shop", time.Minute)
	t.Logf("the Stack was gone %s after its deletion", took.Round(100*time.Millisecond))
	if recs := helmRecords(t, ns); len(recs) != 0 {
		t.Errorf("%d release records left after a pruning deletion", len(recs))
	}
	for _, d := range []string{"api", "web"} {
		if deploymentExists(t, ns, d) {
			t.Errorf("Deployment %s/%s left after a pruning deletion", ns, d)
		}
	}
}

// Deleting a Stack without prune (the default) leaves its releases
// running, and no record says the stack owns them.
func TestDeleteWithoutPruneLetsGo(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", nil))
	startController(t, ns, nil)
	waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if recs := helmRecords(t, ns); len(recs) != 2 || recs[0].Labels["convoy.dev/stack"] != ns {
		t.Fatalf("before the deletion: %d records, labels %v", len(recs), recs[0].Labels)
	}
	deleteStack(t, c, ns, "shop")
	waitGone(t, c, ns, "shop", time.Minute)
	recs := helmRecords(t, ns)
	if len(recs) != 2 {
		t.Fatalf("%d release records after the deletion, want the 2 left running", len(recs))
	}
	for _, r := range recs {
		if v, ok := r.Labels["convoy.dev/stack"]; ok || r.Labels["status"] != "deployed" {
			t.Errorf("record %s: convoy.dev/stack=%q, status %s", r.Name, v, r.Labels["status"])
		}
	}
	for _, d := range []string{"api", "web"} {
		if !deploymentExists(t, ns, d) {
			t.Errorf("Deployment %s/%s gone, though spec.prune is false", ns, d)
		}
	}
}

// An uninstall that fails keeps the Stack, naming the release; the
// force-delete annotation lets it go, leaving the release as it is.
func TestDeletionFailedThenForced(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	dir := stackDir(t, ns, "v1", "set = { failDelete = true }")
	hook := `{{- if .Values.failDelete }}
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-pre-delete
  annotations:
    helm.sh/hook: pre-delete
  labels:
    ` + devcluster.LabelFail + `: "true"
spec:
  restartPolicy: Never
  containers:
    - name: check
      image: busybox
{{- end }}
`
	if err := os.WriteFile(filepath.Join(dir, "charts", "app", "templates", "pre-delete.yaml"), []byte(hook), 0o644); err != nil {
		t.Fatal(err)
	}
	push(t, reg, dir, "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) { st.Spec.Prune = true }))
	startController(t, ns, nil)
	waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	deleteStack(t, c, ns, "shop")
	st := waitStack(t, c, ns, "shop", 60*time.Second, "DeletionFailed", func(st *v1alpha1.Stack) bool {
		c := cond(st, "Ready")
		return c != nil && c.Reason == "DeletionFailed"
	})
	if msg := cond(st, "Ready").Message; cond(st, "Ready").Status != metav1.ConditionFalse || !strings.Contains(msg, "release.api") || !strings.Contains(msg, "convoy.dev/force-delete") {
		t.Fatalf("DeletionFailed does not name the release:%s", describe(st))
	}
	t.Logf("DeletionFailed: %s", cond(st, "Ready").Message)
	if deploymentExists(t, ns, "web") {
		t.Error("web, which depends on api, was not uninstalled first")
	}
	if !deploymentExists(t, ns, "api") {
		t.Error("api is gone though its uninstall failed")
	}

	before := st.DeepCopy()
	st.Annotations = map[string]string{stack.AnnotationForceDelete: "true"}
	if err := c.Patch(context.Background(), st, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, c, ns, "shop", time.Minute)
	var d appsv1.Deployment
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "api"}, &d); err != nil {
		t.Errorf("api after a forced deletion: %v", err)
	}
}

// A Stack deleted without prune after its varsFrom Secret (a namespace
// deleted whole): the stack cannot be loaded, and its recorded identity
// says which records to let go.
func TestDeleteWithoutPruneWhenInputsAreGone(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-secrets"}, StringData: map[string]string{"token": "s3cr3t"}}
	create(t, c, secret)
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.VarsFrom = []v1alpha1.VarsFrom{{Kind: "Secret", Name: "shop-secrets"}}
	}))
	startController(t, ns, nil)
	waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if err := c.Delete(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	deleteStack(t, c, ns, "shop")
	waitGone(t, c, ns, "shop", time.Minute)
	recs := helmRecords(t, ns)
	if len(recs) != 2 {
		t.Fatalf("%d release records after the deletion, want the 2 left running", len(recs))
	}
	for _, r := range recs {
		if v, ok := r.Labels["convoy.dev/stack"]; ok {
			t.Errorf("record %s still says convoy.dev/stack=%s", r.Name, v)
		}
	}
	// Let go by its identity, not by loading the stack.
	devtest.Eventually(t, 30*time.Second, func() bool {
		evs, err := cluster.Client().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range evs.Items {
			found = found || (e.Reason == "Abandoned" && strings.Contains(e.Note, "let go by its identity "+ns+"@"))
		}
		return found
	}, func() string { return "no Abandoned event saying the releases were let go by the Stack's identity" })
}
