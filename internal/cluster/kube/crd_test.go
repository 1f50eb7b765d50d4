package kube_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// widgetCRD is a CRD in a group of its own per test, since CRDs are
// cluster-scoped and the cluster may be shared.
func widgetCRD(t *testing.T) (manifest, group string) {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	group = "t" + hex.EncodeToString(b) + ".convoy.dev"
	return strings.ReplaceAll(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.GROUP
spec:
  group: GROUP
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, "GROUP", group), group
}

func TestInstallCRDs(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := testContext(t, 60*time.Second)
	c := newClient(t)
	crdManifest, group := widgetCRD(t)
	t.Cleanup(func() {
		_, _ = c.Delete(context.Background(), []kube.Ref{{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "widgets." + group}}, kube.DeleteOptions{})
	})
	widget := "apiVersion: " + group + "/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 3\n"

	// The client's discovery cache is warm and does not know the kind yet.
	if _, err := c.Parse(widget, ns); err == nil {
		t.Fatal("Widget parsed before its CRD exists")
	}

	crds := parse(t, c, ns, crdManifest)
	if w, err := c.InstallCRDs(ctx, crds); err != nil || w != (kube.CRDWrites{Created: 1}) {
		t.Fatalf("install: %v, %s", err, w)
	}
	crd, err := c.Get(ctx, kube.RefOf(crds[0]))
	if err != nil {
		t.Fatal(err)
	}
	if !hasCondition(crd, "Established") {
		t.Errorf("CRD not Established after InstallCRDs: %v", crd.Object["status"])
	}

	objs := parse(t, c, ns, widget)
	if objs[0].GetNamespace() != ns {
		t.Errorf("Widget namespace = %q, want %q (namespaced by its CRD)", objs[0].GetNamespace(), ns)
	}
	results, err := c.Apply(ctx, objs, kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Action != kube.ActionCreated || results[0].Ref.String() != group+"/v1 Widget "+ns+"/w" {
		t.Errorf("result = %v %s", results[0].Ref, results[0].Action)
	}
	if err := c.Wait(ctx, refs(objs), kube.WaitOptions{}); err != nil {
		t.Errorf("wait for a custom resource without conditions: %v", err)
	}

	// Custom resources are judged by their standard conditions. This CRD
	// has no status subresource, so the manifest can carry the status a
	// controller would write.
	pending := parse(t, c, ns, widget+`status:
  conditions:
  - {type: Ready, status: "False", reason: Provisioning, message: waiting for a backend}
`)
	pending[0].SetName("pending")
	if _, err := c.Apply(ctx, pending, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	err = c.Wait(testContext(t, time.Second), refs(pending), kube.WaitOptions{})
	want := group + "/v1 Widget " + ns + "/pending: not ready: waiting for a backend"
	if err == nil || err.Error() != want {
		t.Errorf("wait for a Widget that is not Ready: %v, want %q", err, want)
	}

	// crds/ is installed, never upgraded: a changed CRD is left as it was.
	changed := parse(t, c, ns, strings.Replace(crdManifest, "size: {type: integer}", "size: {type: string}", 1))
	if w, err := c.InstallCRDs(ctx, changed); err != nil || w != (kube.CRDWrites{Unchanged: 1}) {
		t.Fatalf("install again: %v, %s", err, w)
	}
	crd, err = c.Get(ctx, kube.RefOf(crds[0]))
	if err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	typ, _, _ := unstructured.NestedString(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", "size", "type")
	if typ != "integer" {
		t.Errorf("existing CRD was changed: size type = %q", typ)
	}
}

func TestInstallCRDsRejectsOtherKinds(t *testing.T) {
	ns := cluster.Namespace(t)
	c := newClient(t)
	_, err := c.InstallCRDs(testContext(t, 10*time.Second), parse(t, c, ns, configMap("a: b")))
	want := "v1 ConfigMap " + ns + "/settings: not an apiextensions.k8s.io/v1 CustomResourceDefinition"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

func hasCondition(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}

// A CRD the API server will not serve (its kind is taken) fails without
// waiting for the timeout.
func TestInstallCRDsNamesNotAccepted(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	ctx := testContext(t, 60*time.Second)
	c := newClient(t)
	first, group := widgetCRD(t)
	clash := strings.NewReplacer("name: widgets.", "name: gadgets.", "plural: widgets", "plural: gadgets", "singular: widget", "singular: gadget").Replace(first)
	crds := parse(t, c, ns, first+"---"+clash)
	t.Cleanup(func() {
		for _, r := range refs(crds) {
			_, _ = c.Delete(context.Background(), []kube.Ref{r}, kube.DeleteOptions{})
		}
	})
	start := time.Now()
	_, err := c.InstallCRDs(ctx, crds)
	var nre *kube.NotReadyError
	if !errors.As(err, &nre) || time.Since(start) > 20*time.Second {
		t.Fatalf("error = %v after %s, want a *NotReadyError before the timeout", err, time.Since(start))
	}
	want := "apiextensions.k8s.io/v1 CustomResourceDefinition gadgets." + group + ": failed: "
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "Widget") {
		t.Errorf("error = %q, want %s… naming the kind", err, want)
	}
	t.Log(err)
}

// ReplaceCRDs says how many CRDs it created, replaced with a change and
// found as the chart has them (issue 55, item 11: create_replace logged
// "creating or replacing 25 CRDs" when 2 differed).
func TestReplaceCRDsCounts(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := testContext(t, 60*time.Second)
	c := newClient(t)
	first, _ := widgetCRD(t)
	second := strings.NewReplacer("name: widgets.", "name: gadgets.", "plural: widgets", "plural: gadgets", "singular: widget", "singular: gadget", "kind: Widget", "kind: Gadget", "listKind: WidgetList", "listKind: GadgetList").Replace(first)
	crds := parse(t, c, ns, first+"---"+second)
	t.Cleanup(func() {
		for _, r := range refs(crds) {
			_, _ = c.Delete(context.Background(), []kube.Ref{r}, kube.DeleteOptions{})
		}
	})
	if w, err := c.InstallCRDs(ctx, crds[:1]); err != nil || w.String() != "1 created" {
		t.Fatalf("install one: %v, %s", err, w)
	}
	if w, err := c.ReplaceCRDs(ctx, crds); err != nil || w != (kube.CRDWrites{Created: 1, Unchanged: 1}) {
		t.Fatalf("replace with one new: %v, %s", err, w)
	}
	if w, err := c.ReplaceCRDs(ctx, crds); err != nil || w.String() != "2 unchanged" {
		t.Fatalf("replace again: %v, %s", err, w)
	}
	changed := parse(t, c, ns, strings.Replace(first, "size: {type: integer}", "size: {type: integer, minimum: 0}", 1)+"---"+second)
	if w, err := c.ReplaceCRDs(ctx, changed); err != nil || w.String() != "1 replaced, 1 unchanged" {
		t.Fatalf("replace with one changed: %v, %s", err, w)
	}
}

func TestCRDWritesString(t *testing.T) {
	for w, want := range map[kube.CRDWrites]string{
		{}:                                      "none",
		{Replaced: 2, Unchanged: 23}:            "2 replaced, 23 unchanged",
		{Created: 1, Replaced: 1, Unchanged: 1}: "1 created, 1 replaced, 1 unchanged",
	} {
		if got := w.String(); got != want {
			t.Errorf("%+v: %q, want %q", w, got, want)
		}
	}
}

// A kind discovery does not list, asked for again and again (a chart of
// custom resources planned before its CRDs exist), has discovery read at
// most once a second, not once per object; a CRD the client writes is
// served at once, one created by someone else within a few seconds.
func TestUnknownKindsDoNotReadDiscoveryEachTime(t *testing.T) {
	cluster.Need(t)
	ctx := testContext(t, 60*time.Second)
	c, traffic := countedClient(t)
	_, group := widgetCRD(t)
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}
	start := time.Now()
	for range 50 {
		if c.Served(gvk) {
			t.Fatal("Widget served before its CRD exists")
		}
	}
	reads := discoveryReads(traffic)
	// One read of discovery is a few requests (/api, /apis); one more
	// read is allowed per second the loop took.
	if limit := 4 * (1 + int(time.Since(start)/time.Second)); reads > limit {
		t.Errorf("50 lookups of a kind not served made %d discovery requests, want at most %d", reads, limit)
	}
	t.Logf("50 lookups of a kind not served: %d discovery requests", reads)

	for _, by := range []string{"the client", "someone else"} {
		manifest, group := widgetCRD(t)
		crd := parse(t, c, "", manifest)[0]
		ref := kube.RefOf(crd)
		t.Cleanup(func() { _, _ = c.Delete(context.Background(), []kube.Ref{ref}, kube.DeleteOptions{}) })
		gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}
		if c.Served(gvk) {
			t.Fatal("Widget served before its CRD exists")
		}
		if by == "the client" {
			if _, err := c.Apply(ctx, []*unstructured.Unstructured{crd}, kube.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
		} else {
			other := newClient(t)
			if _, err := other.Apply(ctx, []*unstructured.Unstructured{crd}, kube.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		applied := time.Now()
		for !c.Served(gvk) {
			if time.Since(applied) > 20*time.Second {
				t.Fatalf("a CRD written by %s: its kind not served after 20 s", by)
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("a CRD written by %s: served after %s", by, time.Since(applied).Round(10*time.Millisecond))
	}
}

// discoveryReads counts the discovery requests traffic saw.
func discoveryReads(traffic *kube.Traffic) int {
	m := regexp.MustCompile(`get discovery=(\d+)`).FindStringSubmatch(traffic.ByKind())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
