package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

func testChart(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "charts", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestUnchangedStackSettles: after an apply, plans of the unchanged stack
// exit 0, and a second apply writes no revision, with charts that do what
// real charts do: a test hook named with randAlphaNum, a password kept
// through lookup (else randAlphaNum), a crds/ directory with a custom
// resource in a dependent release, and a release whose values read
// another's revision and resources.
func TestUnchangedStackSettles(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "db" {
  chart = %[2]q
}
release "api" {
  chart  = %[2]q
  values = [{
    dbRevision = release.db.revision
    dbSecret   = release.db.resources["v1/Secret/db-auth"].metadata.name
  }]
}
release "crds" {
  chart = %[3]q
}
release "gadget" {
  chart      = %[4]q
  depends_on = [release.crds]
}
`, ns, testChart(t, "settle"), testChart(t, "gadget-crds"), testChart(t, "gadget")))
	kc := cluster.Kubeconfig()

	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 0 {
		t.Fatalf("first plan: exit %d\n%s\n%s", code, out, errOut)
	}
	// The plan lists the CRD from crds/ and the custom resource whose kind
	// it defines.
	if !regexp.MustCompile(`[+=] apiextensions.k8s.io/v1 CustomResourceDefinition gadgets.settle.convoy.dev`).MatchString(out) ||
		!strings.Contains(out, "settle.convoy.dev/v1 Gadget "+ns+"/gadget") {
		t.Fatalf("the first plan does not list the CRD and the custom resource:\n%s", out)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	before := map[string]string{}
	for _, name := range []string{"db", "api", "crds", "gadget"} {
		before[name] = revisions(statusOf(t, ns, name))
	}
	if cm := configMap(t, ns, "api-settings"); cm["dbRevision"] != "1" || cm["dbSecret"] != "db-auth" {
		t.Fatalf("api did not get db's outputs: %v", cm)
	}
	for i := range 3 {
		code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
		if code != 0 {
			t.Fatalf("plan %d after apply: exit %d\n%s\n%s", i+1, code, out, errOut)
		}
	}
	code, out, errOut = runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress")
	if code != 0 || !strings.Contains(out, "No changes.") {
		t.Fatalf("second apply: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, name := range []string{"db", "api", "crds", "gadget"} {
		if got := revisions(statusOf(t, ns, name)); got != before[name] {
			t.Fatalf("%s: the second apply wrote a revision: %s, was %s", name, got, before[name])
		}
	}

	// A changed value: exit 2, that release's reason names the values,
	// and every other release is unchanged.
	stack := filepath.Join(dir, "stack.hcl")
	src, err := os.ReadFile(stack)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(src), "depends_on = [release.crds]", "depends_on = [release.crds]\n  values     = [{ size = 5 }]", 1)
	if err := os.WriteFile(stack, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode", "--json")
	if code != 2 {
		t.Fatalf("plan with a changed value: exit %d\n%s\n%s", code, out, errOut)
	}
	var p struct {
		Releases []struct {
			Address string
			Action  string
			Reasons []struct{ Kind, Detail string }
		}
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	for _, r := range p.Releases {
		switch {
		case r.Address == "release.gadget":
			if r.Action != "upgrade" || len(r.Reasons) != 1 || r.Reasons[0].Kind != "values" {
				t.Fatalf("gadget: %+v", r)
			}
		case r.Action != "no-op":
			t.Fatalf("%s changes too: %+v", r.Address, r)
		}
	}
}

// configMap reads a ConfigMap's data.
func configMap(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	cm, err := cluster.Client().CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm.Data
}

// TestPlanRightAfterApplyWithoutWait: right after an apply with
// wait = false of 100 releases with Deployments, while the controllers are
// still writing their annotations and status, a plan has no changes. Five
// rounds, each changing every release.
func TestPlanRightAfterApplyWithoutWait(t *testing.T) {
	if testing.Short() {
		t.Skip("applies 500 revisions")
	}
	ns := cluster.Namespace(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
variable "round" {
  type = number
}
release "app" {
  count  = 100
  name   = format("app-%%03d", count.index)
  chart  = %[2]q
  values = [{ message = "round-${var.round}", replicas = 2 }]
  wait   = false
}
`, ns, appChart(t)))
	kc := cluster.Kubeconfig()
	for round := 1; round <= 5; round++ {
		r := fmt.Sprint(round)
		if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--var", "round="+r, "--auto-approve", "--no-progress", "-p", "20"); code != 0 {
			t.Fatalf("round %d: apply: exit %d\n%s\n%s", round, code, out, errOut)
		}
		if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--var", "round="+r, "--detailed-exitcode", "-p", "20"); code != 0 {
			t.Fatalf("round %d: the plan right after apply is not clean: exit %d\n%s\n%s", round, code, out, errOut)
		}
	}
}

// TestReleaseDeployedBeforeTheRunWroteCRDsProvesUnchanged: a release whose
// chart reads .Capabilities, deployed before another release of the run
// wrote CRDs (bitnami's charts beside kube-prometheus-stack's), was
// fingerprinted with the kinds served before. The run settles it again
// once its releases are applied: the next plan proves it unchanged
// without rendering it, where it read "inputs-changed" until an apply.
func TestReleaseDeployedBeforeTheRunWroteCRDsProvesUnchanged(t *testing.T) {
	ns := cluster.Namespace(t)
	group := "resettle-" + ns + ".convoy.dev"
	maker := t.TempDir()
	for name, body := range map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: maker\nversion: 1.0.0\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: maker\ndata:\n  a: b\n",
		"crds/widgets.yaml": fmt.Sprintf("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.%[1]s\nspec:\n  group: %[1]s\n  scope: Namespaced\n  names:\n    plural: widgets\n    singular: widget\n    kind: Widget\n  versions:\n    - name: v1\n      served: true\n      storage: true\n      schema:\n        openAPIV3Schema:\n          type: object\n          x-kubernetes-preserve-unknown-fields: true\n", group),
	} {
		p := filepath.Join(maker, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		crds := dynamic.NewForConfigOrDie(cluster.RESTConfig()).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
		_ = crds.Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
	})
	// caps asks for a group no CRD serves: its rendering does not change
	// when maker's CRD is written, only the capabilities it was
	// fingerprinted with.
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "caps" {
  chart  = %[2]q
  values = [{ group = "absent-%[1]s.convoy.dev" }]
}
release "maker" {
  chart      = %[3]q
  depends_on = [release.caps]
}
`, ns, testChart(t, "incr-caps"), maker))
	kc := cluster.Kubeconfig()
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode", "--stats")
	if code != 0 {
		t.Fatalf("plan after apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "releases-unchanged-by-fingerprint=2") {
		t.Fatalf("the plan after apply did not prove both releases unchanged:\n%s", errOut)
	}
}
