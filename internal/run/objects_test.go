package run_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/testfiles"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/run"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// objectsChart is a chart whose release has a ConfigMap, a Secret and a
// Deployment, and a post-install hook ConfigMap that stays in the cluster
// (hooks are not the release's objects).
func objectsChart(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: objs\nversion: 0.1.0\n",
		"values.yaml": "replicas: 2\npassword: changeme\n",
		"templates/config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  mode: fast
`,
		"templates/secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-auth
stringData:
  password: {{ .Values.password | quote }}
`,
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
        - name: web
          image: "nginx:1.27"
`,
		"templates/hook.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-hook
  annotations:
    helm.sh/hook: post-install
data:
  ran: "yes"
`,
	}
	testfiles.Write(t, dir, files)
}

// objectsStack writes a stack of releases api and web (web after api) of
// the objects chart in namespace ns, plus extra HCL.
func objectsStack(t *testing.T, ns, password, extra string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	objectsChart(t, filepath.Join(dir, "charts", "objs"))
	hcl := fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "api" {
  chart  = "./charts/objs"
  values = [{ password = %[2]q }]
  wait   = true
}
release "web" {
  chart      = "./charts/objs"
  depends_on = [release.api]
  values     = [{ replicas = 1, password = %[2]q }]
  wait       = true
}
%[3]s
`, ns, password, extra)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func refStrings(objs []*unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = kube.RefOf(o).String()
	}
	return out
}

// run.Objects reads the live objects of the stack's deployed revisions,
// in the stack's and the manifests' order, with their status, without
// hooks and without Secrets' values.
func TestObjectsAreTheLiveObjectsOfTheDeployedRevisions(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	const password = "s3cret-convoy-objects"
	dir := objectsStack(t, ns, password, "")
	o := run.Options{Source: run.Source{Dir: dir}, Clusters: run.ClusterOptions{Kubeconfig: cluster.Kubeconfig()}}
	applied, err := runApply(ctx, o, run.ApplyRequest{Command: "convoy apply"})
	if err != nil || applied.Failed() {
		t.Fatalf("apply: %v %+v", err, applied)
	}
	objs, err := runObjects(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"v1 Secret " + ns + "/api-auth", "v1 ConfigMap " + ns + "/api-config", "apps/v1 Deployment " + ns + "/api",
		"v1 Secret " + ns + "/web-auth", "v1 ConfigMap " + ns + "/web-config", "apps/v1 Deployment " + ns + "/web",
	}
	if got := refStrings(objs); !slices.Equal(got, want) {
		t.Fatalf("objects\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The hook ConfigMap is in the cluster, yet not an object of the
	// release.
	if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(ctx, "api-hook", metav1.GetOptions{}); err != nil {
		t.Fatalf("the hook did not run: %v", err)
	}
	for _, obj := range objs {
		switch obj.GetKind() {
		case "Deployment":
			// Live: the wait saw them available, so the status says so.
			avail, _, _ := unstructured.NestedInt64(obj.Object, "status", "availableReplicas")
			replicas, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
			if avail != replicas || replicas == 0 {
				t.Errorf("%s: availableReplicas %d, replicas %d", kube.RefOf(obj), avail, replicas)
			}
		case "Secret":
			if _, has := obj.Object["data"]; has {
				t.Errorf("%s comes with its data", kube.RefOf(obj))
			}
			if obj.GetUID() == "" || obj.Object["type"] != "Opaque" {
				t.Errorf("%s is not the live Secret: %v", kube.RefOf(obj), obj.Object)
			}
		}
		if s := fmt.Sprint(obj.Object); strings.Contains(s, password) || strings.Contains(s, base64.StdEncoding.EncodeToString([]byte(password))) {
			t.Errorf("%s carries the password", kube.RefOf(obj))
		}
	}
}

// A Deployment that vanished and a release never installed are an
// *AbsentError naming each, returned with the objects found.
func TestObjectsReportWhatIsAbsent(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	dir := objectsStack(t, ns, "pw", "")
	o := run.Options{Source: run.Source{Dir: dir}, Clusters: run.ClusterOptions{Kubeconfig: cluster.Kubeconfig()}}
	applied, err := runApply(ctx, o, run.ApplyRequest{Command: "convoy apply"})
	if err != nil || applied.Failed() {
		t.Fatalf("apply: %v %+v", err, applied)
	}
	if err := cluster.Client().AppsV1().Deployments(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A release added to the stack and not applied yet.
	later := objectsStack(t, ns, "pw", `release "db" {
  chart = "./charts/objs"
}`)
	o.Source.Dir = later
	objs, err := runObjects(ctx, o)
	var absent *run.AbsentError
	if !errors.As(err, &absent) {
		t.Fatalf("want an AbsentError, got %v", err)
	}
	want := fmt.Sprintf("release.db (release db in namespace %[1]s): no deployed revision\napps/v1 Deployment %[1]s/web: not found (release.web, revision 1)", ns)
	if err.Error() != want {
		t.Fatalf("error\n%s\nwant\n%s", err, want)
	}
	if got := refStrings(objs); len(got) != 5 || slices.Contains(got, "apps/v1 Deployment "+ns+"/web") {
		t.Fatalf("objects found: %v", got)
	}
}
