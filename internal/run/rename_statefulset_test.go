package run_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/testfiles"
)

// cacheChart is shaped like bitnami's redis where a rename hurts: the
// StatefulSet is named by fullnameOverride (so it keeps its name), but its
// selector, like its pods' labels and its Services' selectors, holds the
// release name (app.kubernetes.io/instance); its data is a
// volumeClaimTemplates entry.
func cacheChart(t *testing.T, dir string) {
	t.Helper()
	labels := `app.kubernetes.io/name: cache
      app.kubernetes.io/instance: {{ .Release.Name }}
      app.kubernetes.io/component: master`
	testfiles.Write(t, dir, map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: cache\nversion: 0.1.0\n",
		"values.yaml": "fullnameOverride: \"\"\n",
		"templates/_helpers.tpl": `{{- define "cache.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride -}}
{{- end -}}
`,
		"templates/statefulset.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ include "cache.fullname" . }}-master
  labels:
    app.kubernetes.io/instance: {{ .Release.Name }}
spec:
  replicas: 1
  serviceName: {{ include "cache.fullname" . }}-headless
  selector:
    matchLabels:
      ` + labels + `
  template:
    metadata:
      labels:
        ` + strings.ReplaceAll(labels, "\n      ", "\n        ") + `
    spec:
      containers:
        - name: redis
          image: "redis:7.4"
          ports:
            - name: redis
              containerPort: 6379
          volumeMounts:
            - name: redis-data
              mountPath: /data
  volumeClaimTemplates:
    - metadata:
        name: redis-data
        labels:
          app.kubernetes.io/instance: {{ .Release.Name }}
      spec:
        accessModes: [ReadWriteOnce]
        resources:
          requests:
            storage: 1Gi
`,
		"templates/service.yaml": `apiVersion: v1
kind: Service
metadata:
  name: {{ include "cache.fullname" . }}-master
spec:
  selector:
    ` + strings.ReplaceAll(labels, "\n      ", "\n    ") + `
  ports:
    - name: redis
      port: 6379
      targetPort: redis
---
apiVersion: v1
kind: Service
metadata:
  name: {{ include "cache.fullname" . }}-headless
spec:
  clusterIP: None
  selector:
    ` + strings.ReplaceAll(labels, "\n      ", "\n    ") + `
  ports:
    - name: redis
      port: 6379
      targetPort: redis
`,
	})
}

// cacheStack writes a stack of the cache chart in ns: release redis, or,
// renamed, release cache with the Helm name cache, fullnameOverride redis
// and the moved block.
func cacheStack(t *testing.T, dir, ns string, renamed bool) {
	t.Helper()
	release := `release "redis" {
  chart   = "./charts/cache"
  wait    = true
  timeout = "60s"
}`
	if renamed {
		release = `release "cache" {
  name    = "cache"
  chart   = "./charts/cache"
  values  = [{ fullnameOverride = "redis" }]
  wait    = true
  timeout = "60s"
}

moved {
  from = release.redis
  to   = release.cache
}`
	}
	hcl := fmt.Sprintf("stack %[1]q {\n  default_namespace = %[1]q\n}\n%[2]s\n", ns, release)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRenameReplacesAStatefulSetSelectingByReleaseName is issue 37.4:
// renaming a release whose StatefulSet keeps its name (fullnameOverride)
// but selects its pods by the release name. The plan says the StatefulSet
// is replaced under its name, why, and which claims its new pods mount
// again; apply deletes the old pod the new StatefulSet cannot adopt, so
// the new one creates redis-master-0 again on the same claim, Ready, an
// endpoint of the Service, and no orphan is left.
func TestRenameReplacesAStatefulSetSelectingByReleaseName(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	c := cluster.Client()
	dir := filepath.Join(t.TempDir(), "stack")
	cacheChart(t, filepath.Join(dir, "charts", "cache"))
	o := run.Options{Source: run.Source{Dir: dir}, Clusters: run.ClusterOptions{Kubeconfig: cluster.Kubeconfig()}}
	const claim = "redis-data-redis-master-0"

	cacheStack(t, dir, ns, false)
	if applied, err := runApply(ctx, o, run.ApplyRequest{Command: "convoy apply"}); err != nil || applied.Failed() {
		t.Fatalf("install: %v %s", err, failures(applied))
	}
	sts, err := c.AppsV1().StatefulSets(ns).Get(ctx, "redis-master", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvc, err := c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldPod, err := c.CoreV1().Pods(ns).Get(ctx, "redis-master-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	cacheStack(t, dir, ns, true)
	p, err := runPlan(ctx, o, run.PlanRequest{})
	if err != nil {
		t.Fatalf("plan of the rename: %v", err)
	}
	text := planText(t, p.Plan)
	ref := fmt.Sprintf("apps/v1 StatefulSet %s/redis-master", ns)
	want := ref + " is replaced under its name, deleted and created again with a new uid: spec.selector is immutable and changes: app.kubernetes.io/instance redis → cache"
	if !strings.Contains(text, want) || strings.Contains(text, ref+" keeps its identity") {
		t.Fatalf("plan of the rename, want %q\n%s", want, text)
	}
	if !strings.Contains(text, "the new pods mount their claims again: "+claim+" (data kept") {
		t.Fatalf("plan of the rename does not say the new pods mount %s again\n%s", claim, text)
	}
	rc := p.Plan.Release("release.cache")
	if rc == nil || rc.Impact == nil || len(rc.Impact.Replacements) != 1 {
		t.Fatalf("impact of the rename: %+v", rc)
	}
	if r := rc.Impact.Replacements[0]; !r.RecreatesPods || len(r.RemountedClaims) != 1 || r.RemountedClaims[0] != claim || len(rc.Impact.DataLoss) != 0 {
		t.Fatalf("replacement %+v, data loss %+v: want its pods recreated on %s, no data loss", r, rc.Impact.DataLoss, claim)
	}
	var js bytes.Buffer
	if err := view.JSON(&js, p.Plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"recreated": true`) || !strings.Contains(js.String(), `"why": "spec.selector is immutable and changes: app.kubernetes.io/instance redis → cache`) {
		t.Fatalf("plan --json of the rename lacks recreated and why:\n%s", js.String())
	}

	applied, err := runApply(ctx, o, run.ApplyRequest{Command: "convoy apply"})
	if err != nil || applied.Failed() {
		t.Fatalf("apply of the rename: %v %s", err, failures(applied))
	}
	after, err := c.AppsV1().StatefulSets(ns).Get(ctx, "redis-master", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.UID == sts.UID {
		t.Fatalf("the StatefulSet kept uid %s: its selector cannot change in place", sts.UID)
	}
	pod, err := c.CoreV1().Pods(ns).Get(ctx, "redis-master-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ctrl := metav1.GetControllerOf(pod); pod.UID == oldPod.UID || ctrl == nil || ctrl.UID != after.UID || pod.Labels["app.kubernetes.io/instance"] != "cache" {
		t.Fatalf("pod redis-master-0 (uid %s, was %s) is controlled by %+v with labels %v: want a new pod of StatefulSet %s", pod.UID, oldPod.UID, ctrl, pod.Labels, after.UID)
	}
	if !podReady(pod) {
		t.Fatalf("pod redis-master-0 is not Ready: %+v", pod.Status)
	}
	mounted := ""
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			mounted = v.PersistentVolumeClaim.ClaimName
		}
	}
	now, err := c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
	if err != nil || mounted != claim || now.UID != pvc.UID {
		t.Fatalf("the new pod mounts %q; claim %s: %v (uid %v, was %s): want the same claim", mounted, claim, err, now.UID, pvc.UID)
	}
	// The EndpointSlice controller follows the pod: wait for it.
	var eps []discoveryv1.EndpointSlice
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := c.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=redis-master"})
		if err != nil {
			return false, err
		}
		eps = list.Items
		return endpointOn(eps, pod.UID), nil
	})
	if err != nil {
		t.Fatalf("no ready endpoint of Service redis-master on pod redis-master-0: %v %+v", err, eps)
	}
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if metav1.GetControllerOf(&p) == nil {
			t.Errorf("pod %s is left orphaned (labels %v)", p.Name, p.Labels)
		}
	}
}

// failures are the errors of an apply's failed steps.
func failures(a *run.Applied) string {
	if a == nil {
		return ""
	}
	var out []string
	for _, r := range a.Releases {
		if r.Err != nil {
			out = append(out, fmt.Sprintf("%s: %v", r.Addr, r.Err))
		}
	}
	return strings.Join(out, "\n")
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// endpointOn: one of slices has a ready endpoint on the pod of uid.
func endpointOn(eps []discoveryv1.EndpointSlice, uid types.UID) bool {
	for _, s := range eps {
		for _, e := range s.Endpoints {
			if e.TargetRef != nil && e.TargetRef.UID == uid && e.Conditions.Ready != nil && *e.Conditions.Ready {
				return true
			}
		}
	}
	return false
}
