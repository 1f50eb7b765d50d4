package kube_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
)

// statefulSet renders StatefulSet db selecting app=db and instance.
func statefulSet(instance string) string {
	return strings.ReplaceAll(`
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 1
  serviceName: db
  selector:
    matchLabels: {app: db, instance: INSTANCE}
  template:
    metadata:
      labels: {app: db, instance: INSTANCE}
    spec:
      containers:
      - name: db
        image: registry.example/db:1
`, "INSTANCE", instance)
}

// A pod holding a StatefulSet's pod name, owned by nothing and not
// selected by it (orphaned by an earlier StatefulSet db whose selector
// held another release name), keeps the StatefulSet from ever creating
// its pod: the wait, and the live view's blockers, name that pod and the
// way out, and the way out works.
func TestWaitNamesAPodHoldingAStatefulSetsName(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	c := newClient(t)
	ctx := testContext(t, 90*time.Second)
	orphan := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: ns, Labels: map[string]string{"app": "db", "instance": "redis"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "registry.example/db:1"}}},
	}
	if _, err := cluster.Client().CoreV1().Pods(ns).Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	objs := parse(t, c, ns, statefulSet("cache"))
	if _, err := c.Apply(ctx, objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "pod " + ns + "/db-0 exists, owned by no StatefulSet (its instance=redis does not match the StatefulSet's selector instance=cache, so it is never adopted): " +
		"the StatefulSet cannot create its pod of that name; delete it (kubectl delete pod -n " + ns + " db-0), " +
		"then make the StatefulSet try again at once (kubectl rollout restart statefulset -n " + ns + " db)"
	var blockers []string
	err := c.Wait(testContext(t, 5*time.Second), refs(objs), kube.WaitOptions{
		BlockersAfter: 500 * time.Millisecond,
		Blockers: func(objs []kube.ObjectStatus) {
			for _, o := range objs {
				blockers = append(blockers, o.String())
			}
		},
	})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("wait: %v\nwant %q", err, want)
	}
	if !strings.Contains(strings.Join(blockers, "\n"), want) {
		t.Fatalf("blockers reported %q\nwant %q", blockers, want)
	}
	// The way out, as kubectl does it.
	if err := cluster.Client().CoreV1().Pods(ns).Delete(ctx, "db-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	restart := `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"` + time.Now().Format(time.RFC3339) + `"}}}}}`
	if _, err := cluster.Client().AppsV1().StatefulSets(ns).Patch(ctx, "db", types.StrategicMergePatchType, []byte(restart), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(testContext(t, 60*time.Second), refs(objs), kube.WaitOptions{}); err != nil {
		t.Fatalf("after deleting the pod: %v", err)
	}
}

// Replacing a StatefulSet whose selector changes (a rename's release
// name in it) deletes the pods it orphans, which the new one cannot adopt
// and whose names they would hold, before creating it again: the new
// StatefulSet's pod runs.
func TestReplaceStatefulSetDeletesPodsItsSelectorDrops(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	c := newClient(t)
	ctx := testContext(t, 120*time.Second)
	first := parse(t, c, ns, statefulSet("redis"))
	if _, err := c.Apply(ctx, first, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx, refs(first), kube.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	old, err := cluster.Client().CoreV1().Pods(ns).Get(ctx, "db-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next := parse(t, c, ns, statefulSet("cache"))
	res, err := c.Apply(ctx, next, kube.ApplyOptions{Replace: refs(next)})
	if err != nil || len(res) != 1 || res[0].Action != kube.ActionReplaced {
		t.Fatalf("replace: %v %+v", err, res)
	}
	if err := c.Wait(testContext(t, 60*time.Second), refs(next), kube.WaitOptions{}); err != nil {
		t.Fatalf("the new StatefulSet: %v", err)
	}
	pod, err := cluster.Client().CoreV1().Pods(ns).Get(ctx, "db-0", metav1.GetOptions{})
	if err != nil || pod.UID == old.UID || pod.Labels["instance"] != "cache" {
		t.Fatalf("pod db-0: %v, uid %s (was %s), labels %v: want the new StatefulSet's", err, pod.UID, old.UID, pod.Labels)
	}
}

// holdFinalizer keeps a test's pods from going before the test lets them.
const holdFinalizer = "convoy.dev/test-hold"

// Replacing a Deployment (its selector changes) deletes it with its pods
// before creating it again: its pods (held by a finalizer, so that
// deleting them takes as long as the test says) are gone when Apply
// returns. The finalizers are released only once the old Deployment is
// seen waiting for its dependents (foreground deletion): a Deployment
// deleted at once, its pods left to the garbage collector, leaves them
// there.
func TestReplaceDeploymentDeletesItsPodsFirst(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	c := newClient(t)
	ctx := testContext(t, 120*time.Second)
	pods := cluster.Client().CoreV1().Pods(ns)
	release := func(ctx context.Context, list []corev1.Pod) error {
		for _, p := range list {
			_, err := pods.Patch(ctx, p.Name, types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) {
				return err
			}
		}
		return nil
	}
	t.Cleanup(func() {
		if list, err := pods.List(context.Background(), metav1.ListOptions{}); err == nil {
			_ = release(context.Background(), list.Items)
		}
	})
	held := strings.Replace(deployment("web", 2), "        app: web\n", "        app: web\n      finalizers: ["+holdFinalizer+"]\n", 1)
	first := parse(t, c, ns, held)
	if _, err := c.Apply(ctx, first, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx, refs(first), kube.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	old, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(old.Items) != 2 || !slices.Contains(old.Items[0].Finalizers, holdFinalizer) {
		t.Fatalf("pods of the first Deployment: %v %+v, want 2 with finalizer %s", err, old.Items, holdFinalizer)
	}
	dep, err := cluster.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Release the pods once the old Deployment waits for them.
	released := make(chan error, 1)
	go func() {
		released <- wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			d, err := cluster.Client().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil || d.UID != dep.UID || d.DeletionTimestamp == nil {
				return false, nil
			}
			return true, release(ctx, old.Items)
		})
	}()

	changed := strings.Replace(deployment("web", 2), "      app: web\n  template:", "      app: web\n      tier: front\n  template:", 1)
	changed = strings.Replace(changed, "        app: web\n", "        app: web\n        tier: front\n", 1)
	next := parse(t, c, ns, changed)
	res, err := c.Apply(ctx, next, kube.ApplyOptions{Replace: refs(next)})
	if err != nil || len(res) != 1 || res[0].Action != kube.ActionReplaced {
		t.Fatalf("replace: %v %+v", err, res)
	}
	for _, p := range old.Items {
		got, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("pod %s of the old Deployment still exists when the new one is created (deletion requested at %v): %v", p.Name, got.DeletionTimestamp, err)
		}
	}
	if t.Failed() {
		return
	}
	if err := <-released; err != nil {
		t.Fatalf("releasing the old pods: %v", err)
	}
	if err := c.Wait(testContext(t, 60*time.Second), refs(next), kube.WaitOptions{}); err != nil {
		t.Fatalf("the new Deployment: %v", err)
	}
}
