package kube_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

func TestWaitReady(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	ctx := testContext(t, 60*time.Second)
	c := newClient(t)
	objs := parse(t, c, ns, deployment("web", 2)+"---"+configMap("a: b")+"---"+job("migrate"))
	if _, err := c.Apply(ctx, objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []kube.WaitOptions{{}, {WaitForJobs: true}} {
		if err := c.Wait(ctx, refs(objs), opts); err != nil {
			t.Fatalf("wait %+v: %v", opts, err)
		}
	}
	dep, err := c.Get(ctx, refs(objs)[0])
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(dep.Object, "status", "availableReplicas"); n != 2 {
		t.Errorf("Wait returned with %d available replicas", n)
	}
}

func TestWaitNeverReady(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	c := newClient(t)
	objs := parse(t, c, ns, configMap("a: b")+"---"+deployment("web", 2, neverReady))
	if _, err := c.Apply(testContext(t, 30*time.Second), objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}

	counted, traffic := countedClient(t)
	start := time.Now()
	err := counted.Wait(testContext(t, 3*time.Second), refs(objs), kube.WaitOptions{})
	if elapsed := time.Since(start); elapsed < 3*time.Second || elapsed > 15*time.Second {
		t.Errorf("Wait returned after %s, want the 3s timeout", elapsed)
	}
	// The Deployment is watched; its status is its own (no ReplicaSet
	// lists at each event); its pods are listed once, to explain it.
	got := traffic.ByKind()
	pods := regexp.MustCompile(`list pods=(\d+)`).FindStringSubmatch(got)
	if !strings.Contains(got, "watch deployments=") || strings.Contains(got, "replicasets") || pods != nil && pods[1] != "1" {
		t.Errorf("requests of the wait: %s", got)
	}
	var nre *kube.NotReadyError
	if !errors.As(err, &nre) {
		t.Fatalf("error = %v (%T), want *NotReadyError", err, err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error does not unwrap to DeadlineExceeded")
	}
	t.Log(err)
	if len(nre.Objects) != 1 || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want exactly the Deployment on one line, got:\n%v", err)
	}
	line := regexp.MustCompile(`^apps/v1 Deployment ` + ns + `/web: not ready: 0/2 replicas available; ` +
		`pod web-[a-z0-9]+-[a-z0-9]+: container web: not ready \(ContainersNotReady\); ` +
		`pod web-[a-z0-9]+-[a-z0-9]+: container web: not ready \(ContainersNotReady\)`)
	if !line.MatchString(err.Error()) {
		t.Errorf("error line does not match %s", line)
	}
}

func TestWaitFailingJob(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	c := newClient(t)
	objs := parse(t, c, ns, deployment("web", 1, neverReady)+"---"+job("migrate", fail))
	if _, err := c.Apply(testContext(t, 30*time.Second), objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}

	// Without WaitForJobs the Job is ready once it exists; the Deployment
	// is what times out.
	err := c.Wait(testContext(t, 2*time.Second), refs(objs), kube.WaitOptions{})
	if err == nil || strings.Contains(err.Error(), "Job") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("without WaitForJobs: error = %v, want a timeout naming only the Deployment", err)
	}

	start := time.Now()
	err = c.Wait(testContext(t, 60*time.Second), refs(objs), kube.WaitOptions{WaitForJobs: true})
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Errorf("failing Job took %s: not failed fast", elapsed)
	}
	var nre *kube.NotReadyError
	if !errors.As(err, &nre) {
		t.Fatalf("error = %v, want *NotReadyError", err)
	}
	t.Log(err)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a failed Job is not a timeout")
	}
	if len(nre.Objects) != 1 || nre.Objects[0].State != kube.StateFailed {
		t.Fatalf("objects = %+v, want the failed Job only", nre.Objects)
	}
	line := regexp.MustCompile(`^batch/v1 Job ` + ns + `/migrate: failed: BackoffLimitExceeded: Job has reached the specified backoff limit; ` +
		`pod migrate-[a-z0-9]+: container main: terminated: Error \(exit code 1\): simulated failure \(devcluster.convoy.dev/fail\)`)
	if !line.MatchString(err.Error()) {
		t.Errorf("error does not match %s", line)
	}
}

func TestWaitMissingObject(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	c := newClient(t)
	ref := kube.Ref{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "absent"}
	err := c.Wait(testContext(t, time.Second), []kube.Ref{ref}, kube.WaitOptions{})
	if err == nil || err.Error() != "v1 ConfigMap "+ns+"/absent: not found" {
		t.Fatalf("error = %v", err)
	}

	// An unknown kind fails at once instead of at the timeout.
	ref = kube.Ref{Group: "example.invalid", Version: "v1", Kind: "Nothing", Namespace: ns, Name: "x"}
	start := time.Now()
	err = c.Wait(testContext(t, 30*time.Second), []kube.Ref{ref}, kube.WaitOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "example.invalid/v1 Nothing "+ns+"/x: no matches for kind") || time.Since(start) > 10*time.Second {
		t.Fatalf("error = %v after %s", err, time.Since(start))
	}
}

func TestWaitLoadBalancer(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	ctx := testContext(t, 30*time.Second)
	c := newClient(t)
	objs := parse(t, c, ns, `
apiVersion: v1
kind: Service
metadata:
  name: front
spec:
  type: LoadBalancer
  selector: {app: front}
  ports: [{port: 80}]
`)
	if _, err := c.Apply(ctx, objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	err := c.Wait(testContext(t, 2*time.Second), refs(objs), kube.WaitOptions{})
	want := "v1 Service " + ns + "/front: not ready: load balancer has no ingress address yet"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}

	// What a cloud controller would do.
	svc, err := cluster.Client().CoreV1().Services(ns).Get(ctx, "front", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.10"}}
	if _, err := cluster.Client().CoreV1().Services(ns).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx, refs(objs), kube.WaitOptions{}); err != nil {
		t.Fatalf("with an ingress address: %v", err)
	}
}

// WaitForCompletion is Helm's hook wait: Jobs complete, Pods succeed.
func TestWaitForCompletion(t *testing.T) {
	t.Parallel()
	pod := func(name string, labels string) string {
		return `
apiVersion: v1
kind: Pod
metadata: {name: ` + name + `, labels: {` + labels + `}}
spec:
  restartPolicy: Never
  containers:
  - {name: main, image: registry.example/hook:1}
`
	}
	tests := []struct {
		name     string
		manifest string
		timeout  time.Duration
		want     string // regexp of the error after "<ns>/"; empty: success
	}{
		{name: "job completes", manifest: job("migrate") + "---" + configMap("a: b"), timeout: 60 * time.Second},
		{name: "failing pod", manifest: pod("hook", fail), timeout: 60 * time.Second,
			want: `^hook: failed: pod failed; pod hook: container main: terminated: Error \(exit code 1\): simulated failure`},
		// A bare pod's containers exit as a Job's do (helm create's test
		// hook).
		{name: "pod succeeds", manifest: pod("hook", "app: hook"), timeout: 60 * time.Second},
		// One whose container runs on (the devcluster's never-ready) is
		// Running, and so unfinished.
		{name: "running pod", manifest: pod("hook", "devcluster.convoy.dev/never-ready: 'true'"), timeout: 2 * time.Second,
			want: `^hook: not ready: pod Running; pod hook: container main: not ready \(ContainersNotReady\)$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := cluster.Namespace(t)
			c := newClient(t)
			objs := parse(t, c, ns, tt.manifest)
			if _, err := c.Apply(testContext(t, 30*time.Second), objs, kube.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			err := c.WaitForCompletion(testContext(t, tt.timeout), refs(objs))
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			prefix := "v1 Pod " + ns + "/"
			if err == nil || !strings.HasPrefix(err.Error(), prefix) || !regexp.MustCompile(tt.want).MatchString(strings.TrimPrefix(err.Error(), prefix)) {
				t.Fatalf("error = %v\nwant %s%s", err, prefix, tt.want)
			}
		})
	}
}

func TestWaitReportsProgress(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	ctx := testContext(t, 60*time.Second)
	c := newClient(t)
	objs := parse(t, c, ns, deployment("p1", 1)+"---"+deployment("p2", 1))
	if _, err := c.Apply(ctx, objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	var seen []string
	err := c.Wait(ctx, refs(objs), kube.WaitOptions{Progress: func(ready, total int) {
		seen = append(seen, fmt.Sprintf("%d/%d", ready, total))
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 || seen[len(seen)-1] != "2/2" {
		t.Fatalf("progress reports %v, want them to end at 2/2", seen)
	}
}

// A StatefulSet whose pod of the first revision never schedules does not
// replace it with the second revision (kubernetes#67250): the wait says
// so, and how to get out, not why the old pod does not schedule.
func TestWaitStatefulSetStuckOnOldRevision(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	c := newClient(t)
	sts := func(cpu string) string {
		return `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 1
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: postgres:17
        resources:
          requests: {cpu: "` + cpu + `"}
`
	}
	ctx := testContext(t, 60*time.Second)
	if _, err := c.Apply(ctx, parse(t, c, ns, sts("1000")), kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// The first revision's pod exists (Pending) before the second applies.
	err := c.Wait(testContext(t, 2*time.Second), refs(parse(t, c, ns, sts("1000"))), kube.WaitOptions{})
	if err == nil || !strings.Contains(err.Error(), "pod db-0: not scheduled: Unschedulable") {
		t.Fatalf("first revision: %v", err)
	}
	objs := parse(t, c, ns, sts("100m"))
	if _, err := c.Apply(ctx, objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	err = c.Wait(testContext(t, 4*time.Second), refs(objs), kube.WaitOptions{})
	want := regexp.MustCompile(`pod db-0: of the previous revision \(db-[a-z0-9]+\) and Pending: the StatefulSet replaces no pod while one is not Running and Ready .*kubernetes#67250.* Delete the pod \(kubectl delete pod -n ` + ns + ` db-0\): the StatefulSet recreates it from the new revision \(db-[a-z0-9]+\)`)
	if err == nil || !want.MatchString(err.Error()) || strings.Contains(err.Error(), "Insufficient cpu") {
		t.Fatalf("second revision: %v\nwant %s", err, want)
	}
	// The way out works: the pod deleted, the new revision runs.
	if err := cluster.Client().CoreV1().Pods(ns).Delete(ctx, "db-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(testContext(t, 30*time.Second), refs(objs), kube.WaitOptions{}); err != nil {
		t.Fatalf("after deleting the old pod: %v", err)
	}
}

// Objects ready when the wait starts are read with a GET each and never
// watched: no list or watch of their kinds (an informer each, per
// namespace, for every release waited on).
func TestWaitReadsReadyObjectsOnce(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	ctx := testContext(t, 60*time.Second)
	c := newClient(t)
	objs := parse(t, c, ns, configMap("a: b")+"---"+deployment("web", 1))
	if _, err := c.Apply(ctx, objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx, refs(objs), kube.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	counted, traffic := countedClient(t)
	var reports []string
	err := counted.Wait(ctx, refs(objs), kube.WaitOptions{Progress: func(ready, total int) { reports = append(reports, fmt.Sprintf("%d/%d", ready, total)) }})
	if err != nil {
		t.Fatal(err)
	}
	// (Besides the new client's discovery.)
	got := strings.TrimSpace(regexp.MustCompile(` ?get discovery=\d+`).ReplaceAllString(traffic.ByKind(), ""))
	if got != "get configmaps=1 get deployments=1" {
		t.Errorf("requests of a wait on ready objects: %s", traffic.ByKind())
	}
	if strings.Join(reports, " ") != "2/2" {
		t.Errorf("progress: %v", reports)
	}

	// Applied again, unchanged: the apply's responses show both ready, so
	// the wait reads neither.
	applied := applyReturning(t, ctx, counted, objs)
	before := traffic.ByKind()
	if err := counted.Wait(ctx, refs(objs), kube.WaitOptions{Applied: applied}); err != nil {
		t.Fatal(err)
	}
	if after := traffic.ByKind(); after != before {
		t.Errorf("a wait on objects the apply returned ready made requests: before %s, after %s", before, after)
	}
}

// An object the apply returns not ready yet (a Deployment just created) is
// read and watched as before; one returned ready (its ConfigMap) is not.
func TestWaitReadsWhatTheApplyReturnedNotReady(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	ctx := testContext(t, 60*time.Second)
	counted, traffic := countedClient(t)
	objs := parse(t, counted, ns, configMap("a: b")+"---"+deployment("web", 1))
	applied := applyReturning(t, ctx, counted, objs)
	before := kindCounts(traffic)
	if err := counted.Wait(ctx, refs(objs), kube.WaitOptions{Applied: applied}); err != nil {
		t.Fatal(err)
	}
	after := kindCounts(traffic)
	if d := after["get configmaps"] - before["get configmaps"]; d != 0 {
		t.Errorf("the ConfigMap, ready as applied, was read %d times", d)
	}
	if d := after["get deployments"] - before["get deployments"]; d != 1 {
		t.Errorf("the new Deployment was read %d times, want 1 (%s)", d, traffic.ByKind())
	}
}

// applyReturning applies objs and returns them as the API server
// returned them (kube.WaitOptions.Applied).
func applyReturning(t *testing.T, ctx context.Context, c *kube.Client, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	results, err := c.Apply(ctx, objs, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	applied := make([]*unstructured.Unstructured, len(results))
	for i, r := range results {
		applied[i] = r.Live
	}
	return applied
}

// kindCounts is traffic.ByKind as a map: "get configmaps" → 1.
func kindCounts(traffic *kube.Traffic) map[string]int {
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`(\S+ \S+)=(\d+)`).FindAllStringSubmatch(traffic.ByKind(), -1) {
		n, _ := strconv.Atoi(m[2])
		out[m[1]] = n
	}
	return out
}

// countedClient is a client whose requests traffic counts.
func countedClient(t *testing.T) (*kube.Client, *kube.Traffic) {
	t.Helper()
	cfg := rest.CopyConfig(cluster.RESTConfig())
	traffic := &kube.Traffic{}
	traffic.Wrap(cfg)
	c, err := kube.New(cfg, kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c, traffic
}
