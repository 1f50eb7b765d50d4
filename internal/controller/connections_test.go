package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/testfiles"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// fiveReleaseStack writes a stack of five independent releases of the app
// chart in namespace ns.
func fiveReleaseStack(t *testing.T, ns string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	appChart(t, filepath.Join(dir, "charts", "app"))
	hcl := fmt.Sprintf("stack %q {\n  default_namespace = %q\n}\n", ns, ns)
	for i := range 5 {
		hcl += fmt.Sprintf("release \"r%d\" {\n  chart  = \"./charts/app\"\n  values = [{ replicas = 0 }]\n}\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// counters reads the controller's cluster connections and its requests by
// verb from /metrics.
func counters(t *testing.T, addr string) (connections float64, requests map[string]float64) {
	t.Helper()
	_, body := get(t, "http://"+addr+"/metrics")
	requests = map[string]float64{}
	re := regexp.MustCompile(`(?m)^convoy_controller_kube_requests_total\{verb="([a-z]+)"\} (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		requests[m[1]], _ = strconv.ParseFloat(m[2], 64)
	}
	m := regexp.MustCompile(`(?m)^convoy_controller_cluster_connections_total (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("/metrics lacks convoy_controller_cluster_connections_total:\n%s", body)
	}
	connections, _ = strconv.ParseFloat(m[1], 64)
	return connections, requests
}

// Once a Stack is deployed, its reconciles reuse the controller's
// connection to the cluster (no new connection, no discovery request) and
// read release records and live objects from the shared informers: no
// list request. A no-change reconcile of a 5-release Stack makes at most
// 5 requests (issue 26): what it still asks is the stack lock (a get); the
// releases are proven unchanged from their records' metadata, without
// reading a payload.
func TestReconcilesReuseConnections(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, fiveReleaseStack(t, ns), "v1")
	metrics := freeAddr(t)
	startController(t, ns, func(o *controller.Options) { o.MetricsAddress = metrics })
	_, cold := counters(t, metrics)
	create(t, c, newStack(ns, "five", "oci://"+reg.Host+"/stacks/app:v1", nil))
	waitStack(t, c, ns, "five", 90*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, ""))
	// The first install reads no object one by one: the plan finds them
	// absent from the shared informers, the check of the plan before its
	// apply lists them (a kind and namespace at a time), the wait takes
	// the ConfigMaps as applied. What it reads is the namespace, the
	// lock and the five new Deployments (not ready as created).
	_, installed := counters(t, metrics)
	if gets := installed["get"] - cold["get"]; gets > 8 {
		t.Errorf("the first install of 5 releases made %v gets, want at most 8 (the namespace, the lock, 5 Deployments' waits)", gets)
	}
	// Past the apply (which drops kept connections: it may install
	// kinds; and whose next plan lists directly: the informers may not
	// have seen its writes), a plan connects once more and starts the
	// informers.
	waitReconciles(t, c, ns, 3, "five")

	conns0, req0 := counters(t, metrics)
	const n = 3
	waitReconciles(t, c, ns, n, "five")
	conns1, req1 := counters(t, metrics)

	if d := conns1 - conns0; d != 0 {
		t.Errorf("%d no-change reconciles made %v new cluster connections, want 0", n, d)
	}
	var parts []string
	total := 0.0
	for _, verb := range []string{"get", "list", "watch", "patch", "discovery", "post", "put", "delete"} {
		if d := req1[verb] - req0[verb]; d != 0 {
			parts = append(parts, fmt.Sprintf("%s %.1f", verb, d/n))
			if verb != "watch" { // the informers' watches, renewed now and then
				total += d
			}
		}
	}
	t.Logf("requests per no-change reconcile of a 5-release Stack: %s", strings.Join(parts, ", "))
	for _, verb := range []string{"list", "discovery"} {
		if d := req1[verb] - req0[verb]; d != 0 {
			t.Errorf("%d no-change reconciles made %v %s requests, want 0", n, d, verb)
		}
	}
	// The waits above may end as a next reconcile starts: allow its
	// first request (the lock).
	if limit := float64(n*5 + 1); total > limit {
		t.Errorf("%d no-change reconciles made %v requests, want at most 5 each (%v)", n, total, limit)
	}
	if getStack(t, c, ns, "five").Status.Plan.HasChanges {
		t.Error("the Stack's plan has changes: the reconciles were not no-change ones")
	}

	// An apply that installs no kind (no CRD) keeps the connection: the
	// plans after it connect no more.
	before := getStack(t, c, ns, "five").Status.LastAppliedPlan
	dir := fiveReleaseStack(t, ns)
	hcl, err := os.ReadFile(filepath.Join(dir, "stack.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.ReplaceAll(string(hcl), "replicas = 0", `replicas = 0, message = "v2"`)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	push(t, reg, dir, "v2")
	update(t, c, ns, "five", func(st *v1alpha1.Stack) { st.Spec.Source = "oci://" + reg.Host + "/stacks/app:v2" })
	waitStack(t, c, ns, "five", 90*time.Second, "applied again", func(st *v1alpha1.Stack) bool {
		return st.Status.LastAppliedPlan != before && isCond("Ready", metav1.ConditionTrue, "")(st)
	})
	if got := configMessage(t, c, ns, "r0"); got != "v2" {
		t.Fatalf("r0's message after the apply: %q", got)
	}
	waitReconciles(t, c, ns, 2, "five")
	if conns2, _ := counters(t, metrics); conns2 != conns1 {
		t.Errorf("an apply without CRDs and the plans after it made %v new cluster connections, want 0", conns2-conns1)
	}
}

// An apply that installs a CRD drops the kept connections: the next plan
// reads discovery again, and a template testing .Capabilities for the new
// kind renders what it guards (with the connection kept, it would not for
// DefaultConnectionMaxAge).
func TestApplyOfACRDRefreshesCapabilities(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	group := strings.ReplaceAll(ns, "-", "") + ".convoy.dev"
	t.Cleanup(func() {
		dyn, err := dynamic.NewForConfig(cluster.RESTConfig())
		if err == nil {
			crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
			_ = dyn.Resource(crds).Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
		}
	})
	dir := filepath.Join(t.TempDir(), "stack")
	testfiles.Write(t, dir, map[string]string{
		"charts/widgets/Chart.yaml": "apiVersion: v2\nname: widgets\nversion: 0.1.0\n",
		"charts/widgets/templates/crd.yaml": fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%[1]s
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group),
		"charts/user/Chart.yaml": "apiVersion: v2\nname: user\nversion: 0.1.0\n",
		"charts/user/templates/cm.yaml": fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  message: {{ if .Capabilities.APIVersions.Has "%s/v1/Widget" }}"widgets served"{{ else }}"no widgets"{{ end }}
`, group),
		"stack.hcl": fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "widgets" {
  chart = "./charts/widgets"
}
release "user" {
  chart      = "./charts/user"
  depends_on = [release.widgets]
}
`, ns),
	})
	push(t, reg, dir, "v1")
	create(t, c, newStack(ns, "crd", "oci://"+reg.Host+"/stacks/app:v1", nil))
	startController(t, ns, nil)
	waitStack(t, c, ns, "crd", 90*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, ""))
	// The first plan rendered user before the CRD existed; the plan after
	// the apply sees the kind and upgrades user.
	devtest.Eventually(t, 60*time.Second, func() bool { return configMessage(t, c, ns, "user") == "widgets served" }, func() string {
		return fmt.Sprintf("user's ConfigMap says %q 60s after the CRD's apply: the next plans did not see the new kind%s",
			configMessage(t, c, ns, "user"), describe(getStack(t, c, ns, "crd")))
	})
}
