package kube_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
)

// The metadata lists convoy reads through its own buffers give what
// client-go's metadata client gives: built-in kinds in a namespace, with a
// label selector, custom resources, cluster-scoped kinds page by page, and
// a resource the server does not serve (NotFound).
func TestMetadataListsAsClientGo(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := testContext(t, 90*time.Second)
	c := newClient(t)
	cfg := cluster.RESTConfig()
	ours, err := kube.NewMetadataForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	crd, group := widgetCRD(t)
	t.Cleanup(func() {
		_, _ = c.Delete(context.Background(), []kube.Ref{{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "widgets." + group}}, kube.DeleteOptions{})
	})
	manifest := ""
	for i := range 3 {
		manifest += fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  labels: {pick: %q}\n  annotations: {note: %q}\ndata: {k: v}\n", i, fmt.Sprint(i%2), fmt.Sprint(i))
	}
	if _, err := c.InstallCRDs(ctx, parse(t, c, ns, crd)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(ctx, parse(t, c, ns, manifest), kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	for i := range 2 {
		w := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w-%d", i), "labels": map[string]any{"n": fmt.Sprint(i)}},
			"spec":     map[string]any{"size": int64(i)},
		}}
		if _, err := dyn.Resource(widgets).Namespace(ns).Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	for _, tc := range []struct {
		name      string
		gvr       schema.GroupVersionResource
		namespace string
		opts      metav1.ListOptions
		items     int
	}{
		{"configmaps", configMaps, ns, metav1.ListOptions{}, 4}, // and kube-root-ca.crt
		{"configmaps with a selector", configMaps, ns, metav1.ListOptions{LabelSelector: "pick=1"}, 1},
		{"custom resources", widgets, ns, metav1.ListOptions{}, 2},
		{"a page of namespaces", namespaces, "", metav1.ListOptions{Limit: 2}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list := func(m metadata.Interface) *metav1.PartialObjectMetadataList {
				var l *metav1.PartialObjectMetadataList
				var err error
				if tc.namespace == "" {
					l, err = m.Resource(tc.gvr).List(ctx, tc.opts)
				} else {
					l, err = m.Resource(tc.gvr).Namespace(tc.namespace).List(ctx, tc.opts)
				}
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			want, got := list(theirs), list(ours)
			if len(got.Items) != tc.items {
				t.Fatalf("%d items, want %d", len(got.Items), tc.items)
			}
			// The same objects read at the same version; a page's continue
			// token is the server's, made at the time of its list.
			if want.ResourceVersion != got.ResourceVersion {
				t.Skipf("the list changed between the two reads (%s, %s)", want.ResourceVersion, got.ResourceVersion)
			}
			if (want.Continue == "") != (got.Continue == "") {
				t.Fatalf("continue %q, client-go's %q", got.Continue, want.Continue)
			}
			want.Continue, got.Continue = "", ""
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("lists differ:\n%+v\nclient-go's:\n%+v", got, want)
			}
		})
	}

	// What a plan reads of a list (ListApplied, which skips all but the
	// client's apply entries) is AppliedOf each object client-go lists.
	for _, tc := range []struct{ apiVersion, kind string }{{"v1", "ConfigMap"}, {group + "/v1", "Widget"}} {
		gv, _ := schema.ParseGroupVersion(tc.apiVersion)
		gvr := configMaps
		if tc.kind == "Widget" {
			gvr = widgets
		}
		l, err := theirs.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.ListApplied(ctx, gv.String(), tc.kind, ns, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]*kube.Applied{}
		for i := range l.Items {
			want[l.Items[i].Name] = kube.AppliedOf(c.FieldManager(), &l.Items[i])
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: listed applied %v, client-go's list gives %v", tc.kind, got, want)
		}
		if tc.kind == "ConfigMap" && (got["cm-0"] == nil || got["cm-0"].Fields == "") {
			t.Errorf("cm-0's apply entry not read: %+v", got["cm-0"])
		}
	}

	// Full lists (decoded once, kube's dynamic client) are client-go's:
	// a built-in kind's items, which the server sends without kind, and
	// custom resources.
	for _, tc := range []struct {
		apiVersion, kind string
		gvr              schema.GroupVersionResource
	}{{"v1", "ConfigMap", configMaps}, {group + "/v1", "Widget", widgets}} {
		l, err := dyn.Resource(tc.gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.List(ctx, tc.apiVersion, tc.kind, ns, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(l.Items) || len(got) < 2 {
			t.Fatalf("%s: %d objects listed, client-go %d", tc.kind, len(got), len(l.Items))
		}
		for i := range got {
			if got[i].GetKind() != tc.kind {
				t.Errorf("%s: item %d is of kind %q", tc.kind, i, got[i].GetKind())
			}
			if !reflect.DeepEqual(got[i], &l.Items[i]) {
				t.Errorf("%s: item %d differs:\n%v\nclient-go's:\n%v", tc.kind, i, got[i].Object, l.Items[i].Object)
			}
		}
	}

	_, err = ours.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}).Namespace(ns).List(ctx, metav1.ListOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("a resource the server does not serve: %v, want NotFound", err)
	}
}
