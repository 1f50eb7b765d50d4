package run_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/testfiles"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// gadgetVersion is one version of the gadgets CRD: its name, flags and
// the properties of its spec.
type gadgetVersion struct {
	name            string
	served, storage bool
	size, color     bool
}

// gadgetCRD is the CRD of kind Gadget in group (one per test: CRDs are
// cluster-wide), with a status subresource whose status is open.
func gadgetCRD(group string, versions ...gadgetVersion) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.%[1]s
spec:
  group: %[1]s
  scope: Namespaced
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  versions:
`, group)
	for _, v := range versions {
		fmt.Fprintf(&b, `    - name: %s
      served: %t
      storage: %t
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            status: {type: object, x-kubernetes-preserve-unknown-fields: true}
            spec:
              type: object
              properties:
`, v.name, v.served, v.storage)
		if v.size {
			b.WriteString("                size: {type: integer}\n")
		}
		if v.color {
			b.WriteString("                color: {type: string}\n")
		}
	}
	return b.String()
}

// gadgetChart writes chart "gadget" under dir/charts: crd in crds/, and in
// templates a Gadget g1 of apiVersion (none when "") and a ConfigMap.
func gadgetChart(t *testing.T, dir, crd, apiVersion string) {
	t.Helper()
	files := map[string]string{
		"Chart.yaml":               "apiVersion: v2\nname: gadget\nversion: 0.1.0\n",
		"crds/gadgets.yaml":        crd,
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gadget-settings\ndata:\n  a: b\n",
	}
	if apiVersion != "" {
		files["templates/gadget.yaml"] = "apiVersion: " + apiVersion + "\nkind: Gadget\nmetadata:\n  name: g1\nspec:\n  size: 1\n"
	}
	chartDir := filepath.Join(dir, "charts", "gadget")
	if err := os.RemoveAll(chartDir); err != nil {
		t.Fatal(err)
	}
	testfiles.Write(t, chartDir, files)
}

// gadgetStack writes the stack of release "gadget" in ns; extra goes in
// its block.
func gadgetStack(t *testing.T, dir, ns, extra string) {
	t.Helper()
	hcl := fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "gadget" {
  chart   = "./charts/gadget"
  wait    = true
  timeout = "2m"
%[2]s
}
`, ns, extra)
	testfiles.Write(t, dir, map[string]string{"stack.hcl": hcl})
}

// crdEnv is a stack directory with the gadget chart of a group of its own.
type crdEnv struct {
	t     *testing.T
	dir   string
	ns    string
	group string
	o     run.Options
	dyn   dynamic.Interface
}

func newCRDEnv(t *testing.T) *crdEnv {
	ns := cluster.Namespace(t)
	dyn, err := dynamic.NewForConfig(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	e := &crdEnv{t: t, dir: filepath.Join(t.TempDir(), "stack"), ns: ns, group: ns + ".convoy.test", dyn: dyn}
	e.o = run.Options{Source: run.Source{Dir: e.dir}, Clusters: run.ClusterOptions{Kubeconfig: cluster.Kubeconfig()}}
	t.Cleanup(func() {
		_ = dyn.Resource(crdGVR).Delete(context.Background(), "gadgets."+e.group, metav1.DeleteOptions{})
	})
	return e
}

func (e *crdEnv) plan(step string) (*plan.ReleaseChange, string) {
	e.t.Helper()
	p, err := runPlan(context.Background(), e.o, run.PlanRequest{})
	if err != nil {
		e.t.Fatalf("%s: plan: %v", step, err)
	}
	return p.Plan.Release("release.gadget"), planText(e.t, p.Plan)
}

func (e *crdEnv) apply(step string) *run.Applied {
	e.t.Helper()
	applied, err := runApply(context.Background(), e.o, run.ApplyRequest{Command: "convoy apply"})
	if err != nil {
		e.t.Fatalf("%s: apply: %v", step, err)
	}
	return applied
}

func (e *crdEnv) mustApply(step string) {
	e.t.Helper()
	if applied := e.apply(step); applied.Failed() {
		e.t.Fatalf("%s: apply failed: %+v", step, applied.Releases[0].Err)
	}
}

// crd is the live CRD (nil when absent).
func (e *crdEnv) crd() *unstructured.Unstructured {
	e.t.Helper()
	u, err := e.dyn.Resource(crdGVR).Get(context.Background(), "gadgets."+e.group, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return u
}

func (e *crdEnv) liveVersions() []string {
	e.t.Helper()
	var out []string
	vs, _, _ := unstructured.NestedSlice(e.crd().Object, "spec", "versions")
	for _, v := range vs {
		out = append(out, v.(map[string]any)["name"].(string))
	}
	return out
}

func crdObject(rc *plan.ReleaseChange) *plan.ObjectChange {
	for _, o := range rc.Objects {
		if o.Ref.Kind == "CustomResourceDefinition" {
			return o
		}
	}
	return nil
}

var (
	alphaOnly      = []gadgetVersion{{name: "v1alpha1", served: true, storage: true, size: true, color: true}}
	alphaAndV1     = []gadgetVersion{{name: "v1alpha1", served: true, size: true, color: true}, {name: "v1", served: true, storage: true, size: true, color: true}}
	v1WithoutColor = []gadgetVersion{{name: "v1", served: true, storage: true, size: true}}
)

// TestCRDsCreateReplace: with crds = "create_replace" an upgrade plans
// each changed CRD of crds/ as a short schema summary and replaces it
// before the release's other objects; a version objects are stored in
// that the chart drops, and a field it removes, are reported as data
// loss, and the API server's refusal is in the plan, not only in the
// failed apply.
func TestCRDsCreateReplace(t *testing.T) {
	e := newCRDEnv(t)
	replace := `  crds = "create_replace"`
	gadgetStack(t, e.dir, e.ns, replace)
	gadgetChart(t, e.dir, gadgetCRD(e.group, alphaOnly...), e.group+"/v1alpha1")
	e.mustApply("install")
	if got := e.liveVersions(); !slices.Equal(got, []string{"v1alpha1"}) {
		t.Fatalf("install: CRD versions %v", got)
	}

	// A new storage version: planned as a summary, applied, and the
	// chart's Gadget (still v1alpha1) applied after it.
	gadgetChart(t, e.dir, gadgetCRD(e.group, alphaAndV1...), e.group+"/v1alpha1")
	rc, text := e.plan("v1 added")
	t.Logf("v1 added:\n%s", text)
	o := crdObject(rc)
	if rc.Action != plan.ActionUpgrade || o == nil || o.Action != plan.ObjectUpdate || o.CRD == nil {
		t.Fatalf("v1 added: %s", text)
	}
	for _, want := range []string{
		"~ apiextensions.k8s.io/v1 CustomResourceDefinition gadgets." + e.group + ` (crds/: replaced before the release's other objects (crds = "create_replace"))`,
		"version v1: added (served true, storage true)",
		"version v1alpha1: storage true → false",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("v1 added: plan lacks %q:\n%s", want, text)
		}
	}
	if !slices.ContainsFunc(rc.Reasons, func(r plan.Reason) bool { return r.Kind == plan.ReasonCRDs }) {
		t.Errorf("v1 added: reasons %+v lack crds (the chart and values are the same)", rc.Reasons)
	}
	if rc.Impact != nil && len(rc.Impact.DataLoss) > 0 {
		t.Errorf("v1 added loses nothing: %+v", rc.Impact.DataLoss)
	}
	e.mustApply("v1 added")
	if got := e.liveVersions(); !slices.Equal(got, []string{"v1alpha1", "v1"}) {
		t.Fatalf("v1 added: CRD versions %v", got)
	}
	if rc, text := e.plan("v1 added, again"); rc.Action != plan.ActionNoOp {
		t.Fatalf("v1 added, again: %s", text)
	}

	// v1alpha1 dropped (status.storedVersions lists it: the Gadget was
	// stored in it) and v1's color removed: data loss, and the API
	// server's refusal in the plan.
	gadgetChart(t, e.dir, gadgetCRD(e.group, v1WithoutColor...), e.group+"/v1")
	rc, text = e.plan("v1alpha1 removed")
	t.Logf("v1alpha1 removed:\n%s", text)
	o = crdObject(rc)
	if o == nil || o.Action != plan.ObjectUpdate || !strings.Contains(o.Reason, "refuses") {
		t.Fatalf("v1alpha1 removed: %s", text)
	}
	for _, want := range []string{
		"version v1alpha1: removed (listed in status.storedVersions)",
		"version v1: - spec.color (string), pruned from stored objects",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("v1alpha1 removed: plan lacks %q:\n%s", want, text)
		}
	}
	if rc.Impact == nil || len(rc.Impact.DataLoss) != 1 {
		t.Fatalf("v1alpha1 removed: impact %+v", rc.Impact)
	}
	loss := rc.Impact.DataLoss[0]
	if loss.Ref.Kind != "CustomResourceDefinition" || !strings.Contains(loss.Reason, "version v1alpha1 is removed while status.storedVersions lists it") ||
		!strings.Contains(loss.Reason, "version v1's schema drops spec.color: its values are pruned") {
		t.Fatalf("v1alpha1 removed: data loss %+v", loss)
	}
	applied := e.apply("v1alpha1 removed")
	t.Logf("v1alpha1 removed: apply: %v", applied.Releases[0].Err)
	if !applied.Failed() || !strings.Contains(applied.Releases[0].Err.Error(), "CustomResourceDefinition gadgets."+e.group) {
		t.Fatalf("v1alpha1 removed: apply %+v", applied.Releases)
	}
	if got := e.liveVersions(); !slices.Equal(got, []string{"v1alpha1", "v1"}) {
		t.Fatalf("v1alpha1 removed: the refused CRD changed: %v", got)
	}
}

// TestCRDsSkip: crds = "skip" installs no CRD of crds/, and the plan says
// so.
func TestCRDsSkip(t *testing.T) {
	e := newCRDEnv(t)
	gadgetStack(t, e.dir, e.ns, `  crds = "skip"`)
	gadgetChart(t, e.dir, gadgetCRD(e.group, alphaOnly...), "")
	rc, text := e.plan("install")
	if o := crdObject(rc); o == nil || o.Action != plan.ObjectNoOp || !strings.Contains(text, `crds/: not installed (crds = "skip")`) {
		t.Fatalf("install: %s", text)
	}
	e.mustApply("install")
	if e.crd() != nil {
		t.Fatal("crds = skip installed the CRD")
	}
}

// TestCRDsDefaultLeavesExistingCRD: by default (Helm's behaviour) an
// upgrade leaves an existing CRD of crds/ as it is, whatever the chart's
// says now; the same release with crds = "create_replace" replaces it.
func TestCRDsDefaultLeavesExistingCRD(t *testing.T) {
	e := newCRDEnv(t)
	gadgetStack(t, e.dir, e.ns, "")
	gadgetChart(t, e.dir, gadgetCRD(e.group, alphaOnly...), e.group+"/v1alpha1")
	e.mustApply("install")

	gadgetChart(t, e.dir, gadgetCRD(e.group, alphaAndV1...), e.group+"/v1alpha1")
	if err := os.WriteFile(filepath.Join(e.dir, "charts", "gadget", "templates", "more.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: more\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, text := e.plan("upgrade")
	if o := crdObject(rc); o == nil || o.Action != plan.ObjectNoOp || !strings.Contains(o.Reason, "never upgrades them") {
		t.Fatalf("upgrade: %s", text)
	}
	e.mustApply("upgrade")
	if got := e.liveVersions(); !slices.Equal(got, []string{"v1alpha1"}) {
		t.Fatalf("upgrade: the default changed the CRD: versions %v", got)
	}

	gadgetStack(t, e.dir, e.ns, `  crds = "create_replace"`)
	e.mustApply("create_replace")
	if got := e.liveVersions(); !slices.Equal(got, []string{"v1alpha1", "v1"}) {
		t.Fatalf("create_replace: CRD versions %v", got)
	}
}

// TestCRDsCreateReplaceNewField: a chart whose new CRD declares a field
// its custom resource then uses plans and applies (the API server judges
// an object by the CRD it has: the CRD is replaced first, and the object
// is not compared before).
func TestCRDsCreateReplaceNewField(t *testing.T) {
	e := newCRDEnv(t)
	gadgetStack(t, e.dir, e.ns, `  crds = "create_replace"`)
	sizeOnly := []gadgetVersion{{name: "v1alpha1", served: true, storage: true, size: true}}
	gadgetChart(t, e.dir, gadgetCRD(e.group, sizeOnly...), e.group+"/v1alpha1")
	e.mustApply("install")

	gadgetChart(t, e.dir, gadgetCRD(e.group, alphaOnly...), e.group+"/v1alpha1")
	testfiles.Write(t, filepath.Join(e.dir, "charts", "gadget"), map[string]string{
		"templates/gadget.yaml": "apiVersion: " + e.group + "/v1alpha1\nkind: Gadget\nmetadata:\n  name: g1\nspec:\n  size: 1\n  color: red\n",
	})
	rc, text := e.plan("color added")
	t.Logf("color added:\n%s", text)
	if !strings.Contains(text, "version v1alpha1: + spec.color (string)") ||
		!strings.Contains(text, "Gadget "+e.ns+`/g1 (applied after its CRD is replaced (crds = "create_replace"); not compared before)`) || rc.Action != plan.ActionUpgrade {
		t.Fatalf("color added: %s", text)
	}
	e.mustApply("color added")
	g, err := e.dyn.Resource(schema.GroupVersionResource{Group: e.group, Version: "v1alpha1", Resource: "gadgets"}).Namespace(e.ns).Get(context.Background(), "g1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if color, _, _ := unstructured.NestedString(g.Object, "spec", "color"); color != "red" {
		t.Fatalf("color added: live Gadget %v", g.Object["spec"])
	}
	if rc, text := e.plan("color added, again"); rc.Action != plan.ActionNoOp {
		t.Fatalf("color added, again: %s", text)
	}
}
