package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// TestIncrementalAndFullPlansAgree: for each kind of change a release can
// see (its values, its chart's version, a dependency's output, kubectl
// drift, the object a lookup reads, a CRD that changes the cluster's
// capabilities), the incremental plan equals the full one (--refresh=full)
// and names the change; once the change is applied, both plan no change,
// and the incremental plan proves it without rendering the releases whose
// charts render the same from the same inputs (--stats).
func TestIncrementalAndFullPlansAgree(t *testing.T) {
	ns := cluster.Namespace(t)
	group := "incr-" + ns + ".convoy.dev"
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
variable "message" {
  default = "hello"
}
variable "chart" {
  default = %[2]q
}
release "app" {
  chart  = var.chart
  values = [{ message = var.message }]
}
release "reader" {
  chart  = %[2]q
  values = [{ upstream = tostring(release.app.revision) }]
}
release "lookup" {
  chart = %[3]q
}
release "caps" {
  chart  = %[4]q
  values = [{ group = %[5]q }]
}
`, ns, testChart(t, "incr"), testChart(t, "incr-lookup"), testChart(t, "incr-caps"), group))
	kc := cluster.Kubeconfig()
	ctx := context.Background()
	// pure releases are those the incremental plan may prove unchanged:
	// all four, the one whose chart calls lookup too (its record lists
	// the object its lookup read, convoy.dev/lookups: issue 56).
	const pure = 4

	plans := func(step string, vars ...string) (incremental, full map[string]any) {
		t.Helper()
		get := func(refresh string) map[string]any {
			args := append([]string{"plan", "-C", dir, "--kubeconfig", kc, "--json", "--refresh", refresh}, vars...)
			code, out, errOut := runConvoy(t, args...)
			if code != 0 {
				t.Fatalf("%s: plan --refresh=%s: exit %d\n%s\n%s", step, refresh, code, out, errOut)
			}
			var p map[string]any
			if err := json.Unmarshal([]byte(out), &p); err != nil {
				t.Fatalf("%s: %v\n%s", step, err, out)
			}
			delete(p, "created_at")
			return p
		}
		incremental, full = get("incremental"), get("full")
		a, _ := json.MarshalIndent(incremental, "", " ")
		b, _ := json.MarshalIndent(full, "", " ")
		if string(a) != string(b) {
			t.Fatalf("%s: the incremental plan differs from the full one\nincremental:\n%s\nfull:\n%s", step, a, b)
		}
		return incremental, full
	}
	actions := func(p map[string]any) map[string]string {
		out := map[string]string{}
		for _, r := range p["releases"].([]any) {
			m := r.(map[string]any)
			out[m["address"].(string)] = m["action"].(string)
		}
		return out
	}
	reasons := func(p map[string]any, addr string) string {
		for _, r := range p["releases"].([]any) {
			m := r.(map[string]any)
			if m["address"] == addr {
				b, _ := json.Marshal(m["reasons"])
				return string(b)
			}
		}
		return ""
	}
	expect := func(step string, p map[string]any, want map[string]string) {
		t.Helper()
		got := actions(p)
		for addr, action := range want {
			if got[addr] != action {
				t.Fatalf("%s: %s is %q, want %q (all: %v)", step, addr, got[addr], action, got)
			}
		}
	}
	// served is what the cluster serves (group versions and kinds): what
	// release caps renders from. Other tests on the shared cluster add and
	// remove CRDs, which changes it under this test.
	served := func() string {
		_, rls, _ := cluster.Client().Discovery().ServerGroupsAndResources()
		var vs []string
		for _, rl := range rls {
			for _, r := range rl.APIResources {
				vs = append(vs, rl.GroupVersion+"/"+r.Kind)
			}
		}
		slices.Sort(vs)
		return strings.Join(vs, ",")
	}
	var servedAtApply string
	apply := func(step string, args ...string) {
		t.Helper()
		servedAtApply = served()
		args = append([]string{"apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"}, args...)
		if code, out, errOut := runConvoy(t, args...); code != 0 {
			t.Fatalf("%s: apply: exit %d\n%s\n%s", step, code, out, errOut)
		}
	}
	// settled: after an apply, both modes plan no change, and the
	// incremental plan proved the pure releases unchanged without a
	// rendering.
	// recordReads are the records a settled incremental plan reads whole:
	// app's once it lacks the objects annotation.
	recordReads := 0
	settledOnce := func(step string, vars ...string) string {
		t.Helper()
		p, _ := plans(step+", applied", vars...)
		if p["has_changes"] != false {
			return fmt.Sprintf("%s, applied: the plan has changes: %v", step, actions(p))
		}
		args := append([]string{"plan", "-C", dir, "--kubeconfig", kc, "--stats"}, vars...)
		_, _, errOut := runConvoy(t, args...)
		m := regexp.MustCompile(`releases-unchanged-by-fingerprint=(\d+) releases-planned-in-full=(\d+)`).FindStringSubmatch(errOut)
		if m == nil {
			return fmt.Sprintf("%s: no stats line in\n%s", step, errOut)
		}
		if n, _ := strconv.Atoi(m[1]); n != pure {
			return fmt.Sprintf("%s, applied: %s releases proven unchanged without rendering, want %d\n%s", step, m[1], pure, errOut)
		}
		// Records are listed as metadata: only the record of the release
		// planned in full is read whole (issue 26); app's, in the step
		// that strips its objects annotation, too. One is read with a
		// GET; two of the namespace's four deployed records, with one
		// list of them (records.go) instead.
		m = regexp.MustCompile(`record-lists=(\d+) record-reads=(\d+) `).FindStringSubmatch(errOut)
		if m == nil {
			return fmt.Sprintf("%s: no record-lists and record-reads in\n%s", step, errOut)
		}
		lists, _ := strconv.Atoi(m[1])
		reads, _ := strconv.Atoi(m[2])
		wantLists, wantReads := 1, recordReads
		if recordReads >= 2 {
			wantLists, wantReads = 2, 0
		}
		if lists != wantLists || reads != wantReads {
			return fmt.Sprintf("%s, applied: %d record lists and %d records read whole, want %d and %d (%d records needed whole)\n%s", step, lists, reads, wantLists, wantReads, recordReads, errOut)
		}
		// The full plan made no dry run of the objects of the pure
		// releases (dryrunskip.go): the lookup release's rendering, done
		// again with what its lookup finds now, is compared as theirs is
		// (a moved lookup source is the "lookup" step's upgrade below).
		args = append([]string{"plan", "-C", dir, "--kubeconfig", kc, "--stats", "--refresh", "full"}, vars...)
		_, _, errOut = runConvoy(t, args...)
		m = regexp.MustCompile(`rate-limit-wait=\S+ .*dry-runs=(\d+) dry-runs-skipped=(\d+) `).FindStringSubmatch(errOut)
		if m == nil {
			return fmt.Sprintf("%s: no full refresh stats line in\n%s", step, errOut)
		}
		if skipped, _ := strconv.Atoi(m[2]); skipped < pure {
			return fmt.Sprintf("%s, applied: the full refresh skipped %d dry runs, want one per object of the %d pure releases at least\n%s", step, skipped, pure, errOut)
		}
		return ""
	}
	// settled is settledOnce, again after another apply when the
	// cluster's served kinds changed since the last one: release caps
	// renders from them, and other tests on the shared cluster add and
	// remove CRDs. The apply records what it renders from now.
	settled := func(step string, vars ...string) {
		t.Helper()
		for attempt := 1; ; attempt++ {
			at := servedAtApply
			msg := settledOnce(step, vars...)
			if msg == "" {
				return
			}
			if attempt < 4 && served() != at {
				t.Logf("%s: the cluster's served kinds changed since the apply (another test's CRD): applying again", step)
				apply(step+" again", vars...)
				continue
			}
			t.Fatal(msg)
		}
	}

	setLookup := func(value string) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "lookup-source", Namespace: ns}, Data: map[string]string{"value": value}}
		cms := cluster.Client().CoreV1().ConfigMaps(ns)
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	setLookup("one")
	apply("install")
	settled("install")

	// Values.
	p, _ := plans("values", "--var", "message=changed")
	expect("values", p, map[string]string{"release.app": "upgrade", "release.lookup": "no-op", "release.caps": "no-op"})
	if !strings.Contains(reasons(p, "release.app"), `"values"`) {
		t.Fatalf("values: app's reasons do not name the values: %s", reasons(p, "release.app"))
	}

	// A dependency's output: app alone gets revision 2; reader reads it.
	apply("dependency output", "--var", "message=changed", "--target", "release.app")
	p, _ = plans("dependency output", "--var", "message=changed")
	expect("dependency output", p, map[string]string{"release.app": "no-op", "release.reader": "upgrade"})
	apply("dependency output", "--var", "message=changed")
	settled("dependency output", "--var", "message=changed")

	// The chart's version.
	vars := []string{"--var", "message=changed", "--var", "chart=" + testChart(t, "incr-v2")}
	p, _ = plans("chart version", vars...)
	expect("chart version", p, map[string]string{"release.app": "upgrade"})
	if !strings.Contains(reasons(p, "release.app"), "incr 1.0.0 → incr 1.1.0") {
		t.Fatalf("chart version: app's reasons: %s", reasons(p, "release.app"))
	}
	apply("chart version", vars...)
	settled("chart version", vars...)

	// kubectl drift: a field convoy set, changed by another manager.
	deploy, err := cluster.Client().AppsV1().Deployments(ns).Get(ctx, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	three := int32(3)
	deploy.Spec.Replicas = &three
	if _, err := cluster.Client().AppsV1().Deployments(ns).Update(ctx, deploy, metav1.UpdateOptions{FieldManager: "kubectl-scale"}); err != nil {
		t.Fatal(err)
	}
	p, _ = plans("drift", vars...)
	expect("drift", p, map[string]string{"release.app": "upgrade", "release.lookup": "no-op", "release.caps": "no-op"})
	if !strings.Contains(reasons(p, "release.app"), `"drift"`) {
		t.Fatalf("drift: app's reasons: %s", reasons(p, "release.app"))
	}
	apply("drift", vars...)
	settled("drift", vars...)

	// The object a lookup reads.
	setLookup("two")
	p, _ = plans("lookup", vars...)
	expect("lookup", p, map[string]string{"release.lookup": "upgrade", "release.app": "no-op"})
	apply("lookup", vars...)
	settled("lookup", vars...)

	// Other managers' edits (issue 26: the incremental plan reads only
	// the objects' metadata). A label only kubectl sets is no change, and
	// the incremental plan still proves the release unchanged from
	// metadata; a label convoy set, overwritten by kubectl, and a scale
	// through the scale subresource by another manager (an autoscaler)
	// are drift, which both plans show and apply corrects.
	deploys := cluster.Client().AppsV1().Deployments(ns)
	relabelDeploy := func(key, value, manager string) {
		t.Helper()
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, key, value)
		if _, err := deploys.Patch(ctx, "app", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: manager}); err != nil {
			t.Fatal(err)
		}
	}
	relabelDeploy("team", "payments", "kubectl-label")
	p, _ = plans("another manager's label", vars...)
	expect("another manager's label", p, map[string]string{"release.app": "no-op", "release.reader": "no-op"})
	settled("another manager's label", vars...)

	relabelDeploy("app", "hijacked", "kubectl-label")
	p, _ = plans("a label convoy set, overwritten", vars...)
	expect("a label convoy set, overwritten", p, map[string]string{"release.app": "upgrade", "release.caps": "no-op"})
	apply("a label convoy set, overwritten", vars...)
	settled("a label convoy set, overwritten", vars...)

	scale, err := deploys.GetScale(ctx, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 4
	if _, err := deploys.UpdateScale(ctx, "app", scale, metav1.UpdateOptions{FieldManager: "an-autoscaler"}); err != nil {
		t.Fatal(err)
	}
	p, _ = plans("scaled by another manager", vars...)
	expect("scaled by another manager", p, map[string]string{"release.app": "upgrade", "release.caps": "no-op"})
	apply("scaled by another manager", vars...)
	settled("scaled by another manager", vars...)

	// Server-side apply by another manager, as kubectl apply
	// --server-side does: a label only it sets is no change; the value
	// convoy set, applied again by it, makes it a co-owner of the field
	// and changes nothing convoy owns (no change either); a forced apply
	// of another value takes the field over: drift, which both plans show
	// and apply corrects.
	serverSideApply := func(manager string, force bool, labels map[string]string) {
		t.Helper()
		obj, err := json.Marshal(map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "app", "namespace": ns, "labels": labels},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := deploys.Patch(ctx, "app", types.ApplyPatchType, obj, metav1.PatchOptions{FieldManager: manager, Force: &force}); err != nil {
			t.Fatalf("server-side apply as %s: %v", manager, err)
		}
	}
	serverSideApply("kubectl", false, map[string]string{"tier": "backend"})
	p, _ = plans("another manager's server-side apply of its own label", vars...)
	expect("another manager's server-side apply of its own label", p, map[string]string{"release.app": "no-op", "release.reader": "no-op"})
	settled("another manager's server-side apply of its own label", vars...)

	serverSideApply("kubectl", false, map[string]string{"tier": "backend", "app": "app"})
	p, _ = plans("another manager's server-side apply of convoy's value", vars...)
	expect("another manager's server-side apply of convoy's value", p, map[string]string{"release.app": "no-op", "release.reader": "no-op"})
	settled("another manager's server-side apply of convoy's value", vars...)

	serverSideApply("kubectl", true, map[string]string{"tier": "backend", "app": "taken"})
	p, _ = plans("another manager's forced server-side apply", vars...)
	expect("another manager's forced server-side apply", p, map[string]string{"release.app": "upgrade", "release.caps": "no-op"})
	if !strings.Contains(reasons(p, "release.app"), `"drift"`) {
		t.Fatalf("another manager's forced server-side apply: app's reasons: %s", reasons(p, "release.app"))
	}
	apply("another manager's forced server-side apply", vars...)
	settled("another manager's forced server-side apply", vars...)

	// An update by another client (a read-modify-write, as kubectl edit
	// or an operator does) of an annotation convoy does not set: no change.
	deploy, err = deploys.Get(ctx, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deploy.Annotations["example.com/owner"] = "team-a"
	if _, err := deploys.Update(ctx, deploy, metav1.UpdateOptions{FieldManager: "an-operator"}); err != nil {
		t.Fatal(err)
	}
	p, _ = plans("another client's update of its own annotation", vars...)
	expect("another client's update of its own annotation", p, map[string]string{"release.app": "no-op", "release.reader": "no-op"})
	settled("another client's update of its own annotation", vars...)

	// The records convoy writes list their objects, so that plans need not
	// parse the manifest (release.ObjectsAnnotation).
	h := statusOf(t, ns, "app")
	key := fmt.Sprintf("sh.helm.release.v1.app.v%d", h[len(h)-1].Version)
	rec, err := cluster.Client().CoreV1().Secrets(ns).Get(ctx, key, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if objs := rec.Annotations["convoy.dev/objects"]; !strings.Contains(objs, `"apps/v1","Deployment",`+strconv.Quote(ns)+`,"app"]`) {
		t.Fatalf("the record %s does not list its Deployment: %q", key, objs)
	}

	// A record with convoy's labels but without the objects annotation (an
	// older convoy wrote it): the incremental plan reads that record whole
	// (one GET) to parse its manifest, and still proves it unchanged.
	patch := `{"metadata":{"annotations":{"convoy.dev/objects":null}}}`
	if _, err := cluster.Client().CoreV1().Secrets(ns).Patch(ctx, key, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	recordReads = 1
	p, _ = plans("no objects annotation", vars...)
	expect("no objects annotation", p, map[string]string{"release.app": "no-op", "release.reader": "no-op"})
	settled("no objects annotation", vars...)

	// The cluster's capabilities: a CRD that serves the group caps asks for.
	crds := dynamic.NewForConfigOrDie(cluster.RESTConfig()).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{}) })
	waitServed(t, group+"/v1")
	p, _ = plans("capabilities", vars...)
	expect("capabilities", p, map[string]string{"release.caps": "upgrade", "release.app": "no-op"})
	apply("capabilities", vars...)
	if cm := configMap(t, ns, "caps-caps"); cm["served"] != "true" {
		t.Fatalf("capabilities: the chart did not see %s/v1: %v", group, cm)
	}
	settled("capabilities", vars...)

	// A record without convoy's labels and objects annotation (written by
	// helm, or by an older convoy) is planned in full; an apply with no
	// changes labels it, without a revision, and later plans prove it
	// unchanged again (from its manifest).
	before := revisions(statusOf(t, ns, "app"))
	h = statusOf(t, ns, "app")
	key = fmt.Sprintf("sh.helm.release.v1.app.v%d", h[len(h)-1].Version)
	patch = `{"metadata":{"labels":{"convoy.dev/fingerprint":null,"convoy.dev/applied":null},"annotations":{"convoy.dev/objects":null}}}`
	if _, err := cluster.Client().CoreV1().Secrets(ns).Patch(ctx, key, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, errOut := runConvoy(t, append([]string{"plan", "-C", dir, "--kubeconfig", kc, "--stats"}, vars...)...)
	if !strings.Contains(errOut, fmt.Sprintf("releases-unchanged-by-fingerprint=%d ", pure-1)) || !strings.Contains(errOut, "release.app:no-fingerprint") {
		t.Fatalf("unlabelled: the release without labels was not planned in full:\n%s", errOut)
	}
	apply("unlabelled", vars...)
	if got := revisions(statusOf(t, ns, "app")); got != before {
		t.Fatalf("unlabelled: the apply wrote a revision: %s, was %s", got, before)
	}
	settled("unlabelled", vars...)
}

// waitServed waits until discovery lists groupVersion.
func waitServed(t *testing.T, groupVersion string) {
	t.Helper()
	for range 100 {
		if _, err := cluster.Client().Discovery().ServerResourcesForGroupVersion(groupVersion); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s is not served", groupVersion)
}
