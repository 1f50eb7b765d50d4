package gate_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/testfiles"

	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/run/gate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// writeStack writes a stack in namespace ns of the given releases of a
// chart with a Secret and a Deployment (a release's neverReady keeps its
// pods from ever being ready on the devcluster).
func writeStack(t *testing.T, dir, ns, releases string) {
	t.Helper()
	files := map[string]string{
		"charts/app/Chart.yaml":  "apiVersion: v2\nname: app\nversion: 0.1.0\n",
		"charts/app/values.yaml": "replicas: 2\ntoken: none\n",
		"charts/app/templates/secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-token
stringData:
  token: {{ .Values.token | quote }}
`,
		"charts/app/templates/deployment.yaml": testfiles.AppDeployment,
		"stack.hcl":                            fmt.Sprintf("stack %[1]q {\n  default_namespace = %[1]q\n}\n%[2]s", ns, releases),
	}
	testfiles.Write(t, dir, files)
}

// apply applies the stack, failing t with each failed release's error.
func apply(t *testing.T, o run.Options) {
	t.Helper()
	applied, err := runApply(context.Background(), o, run.ApplyRequest{Command: "convoy apply"})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	for _, r := range applied.Releases {
		if r.Err != nil || applied.Failed() {
			t.Errorf("apply %s: %s %v", r.Addr, r.Step, r.Err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// The gate over a real stack: it holds once the stack's
// Deployments are available, fails naming a Deployment that is not, and
// a Deployment that vanished is reported by run.Objects.
func TestCELGateOverAStack(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	const token = "tok-convoy-gate-secret"
	dir := filepath.Join(t.TempDir(), "stack")
	writeStack(t, dir, ns, fmt.Sprintf(`release "api" {
  chart  = "./charts/app"
  values = [{ token = %q }]
  wait   = true
}
`, token))
	o := run.Options{Source: run.Source{Dir: dir}, Clusters: run.ClusterOptions{Kubeconfig: cluster.Kubeconfig()}}
	apply(t, o)
	g := compile(t, allAvailable)
	objs, err := runObjects(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	// Applied with wait: the Deployment is available.
	if r := g.Eval(ctx, gate.ObjectMaps(objs)); !r.Passed || r.Output != allAvailable+" is true over 2 objects" {
		t.Fatalf("%+v", r)
	}
	// No expression sees the Secret's token.
	if r := compile(t, "objects.exists(o, o.kind == 'Secret' && (has(o.data) || has(o.stringData)))").Eval(ctx, gate.ObjectMaps(objs)); r.Passed || r.Err != nil {
		t.Fatalf("an expression sees a Secret's data: %+v", r)
	}

	// A release whose pods never get ready, applied without waiting.
	writeStack(t, dir, ns, fmt.Sprintf(`release "api" {
  chart  = "./charts/app"
  values = [{ token = %q }]
  wait   = true
}
release "stuck" {
  chart  = "./charts/app"
  values = [{ neverReady = true, replicas = 1 }]
  wait   = false
}
`, token))
	apply(t, o)
	objs, err = runObjects(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	r := g.Eval(ctx, gate.ObjectMaps(objs))
	want := fmt.Sprintf("%s failed over 4 objects: no such key: availableReplicas; for apps/v1 Deployment %s/stuck: no such key: availableReplicas", allAvailable, ns)
	if r.Passed || r.Err == nil || r.Output != want {
		t.Fatalf("output\n%s\nwant\n%s\n(%+v)", r.Output, want, r)
	}
	if strings.Contains(r.Output, token) {
		t.Fatal("the output carries the token")
	}
	// Written with has(), the expression is false rather than failing.
	withHas := "objects.all(o, o.kind != 'Deployment' || has(o.status.availableReplicas) && o.status.availableReplicas == o.spec.replicas)"
	r = compile(t, withHas).Eval(ctx, gate.ObjectMaps(objs))
	if want := fmt.Sprintf("%s is false over 4 objects; for apps/v1 Deployment %s/stuck: false", withHas, ns); r.Passed || r.Err != nil || r.Output != want {
		t.Fatalf("output\n%s\nwant\n%s", r.Output, want)
	}

	// A Deployment that vanished.
	if err := cluster.Client().AppsV1().Deployments(ns).Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = runObjects(ctx, o)
	var absent *run.AbsentError
	if !errors.As(err, &absent) || err.Error() != fmt.Sprintf("apps/v1 Deployment %s/api: not found (release.api, revision 1)", ns) {
		t.Fatalf("a vanished Deployment: %v", err)
	}
}
