package kube

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// newDynamicForConfig is client-go's dynamic client whose lists are
// decoded once (unstructuredListOf). client-go's JSON serializer scans a
// list for its kind, then for validity, and its unstructured scheme
// decodes it two and a half times more: the items as raw messages, the
// whole list into maps (items included, then thrown away), each item
// again. A full refresh of 1,000 releases decodes 4,800 live objects from
// lists. Everything but List is client-go's, and both share cfg's rate
// limiter.
func newDynamicForConfig(cfg *rest.Config) (dynamic.Interface, error) {
	cfg = oneBucket(cfg)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// As dynamic.NewForConfigAndClient builds its REST client.
	rc := dynamic.ConfigFor(cfg)
	rc.GroupVersion = &schema.GroupVersion{}
	rc.APIPath = "/if-you-see-this-search-for-the-break"
	lists, err := rest.RESTClientFor(rc)
	if err != nil {
		return nil, err
	}
	return &dynamicLists{Interface: dyn, rest: lists}, nil
}

type dynamicLists struct {
	dynamic.Interface
	rest *rest.RESTClient
}

func (d *dynamicLists) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return &dynamicResource{NamespaceableResourceInterface: d.Interface.Resource(gvr), lists: d, gvr: gvr}
}

type dynamicResource struct {
	dynamic.NamespaceableResourceInterface
	lists *dynamicLists
	gvr   schema.GroupVersionResource
}

func (r *dynamicResource) Namespace(ns string) dynamic.ResourceInterface {
	return &dynamicNamespaced{ResourceInterface: r.NamespaceableResourceInterface.Namespace(ns), lists: r.lists, gvr: r.gvr, ns: ns}
}

func (r *dynamicResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return r.lists.list(ctx, r.gvr, "", opts)
}

type dynamicNamespaced struct {
	dynamic.ResourceInterface
	lists *dynamicLists
	gvr   schema.GroupVersionResource
	ns    string
}

func (n *dynamicNamespaced) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return n.lists.list(ctx, n.gvr, n.ns, opts)
}

func (d *dynamicLists) list(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	data, err := d.rest.Get().AbsPath(metadataPath(gvr, namespace)...).
		SpecificallyVersionedParams(&opts, listParams, schema.GroupVersion{Version: "v1"}).
		Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	return unstructuredListOf(data)
}

// unstructuredListOf is a list's JSON as unstructured.UnstructuredJSONScheme
// decodes it into an UnstructuredList, decoded once: the list's fields but
// its items in Object, each item (an object) in Items, and an item with
// neither kind nor apiVersion given the list's kind without its "List"
// suffix and the list's apiVersion (the API server leaves them out of a
// built-in kind's list). Items that are not objects are refused (client-go
// would take a null one as an empty object).
func unstructuredListOf(data []byte) (*unstructured.UnstructuredList, error) {
	var obj map[string]any
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	list := &unstructured.UnstructuredList{Object: obj}
	kind := list.GetKind()
	if kind == "" {
		return nil, runtime.NewMissingKindErr(string(data))
	}
	var items []any
	if v, ok := obj["items"]; ok && v != nil {
		if items, ok = v.([]any); !ok {
			return nil, fmt.Errorf("%s: items is not a list", kind)
		}
	}
	delete(obj, "items")
	apiVersion := list.GetAPIVersion()
	itemKind := strings.TrimSuffix(kind, "List")
	list.Items = make([]unstructured.Unstructured, len(items))
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: item %d is not an object", kind, i)
		}
		u := &list.Items[i]
		u.Object = m
		if u.GetKind() == "" && u.GetAPIVersion() == "" {
			u.SetKind(itemKind)
			u.SetAPIVersion(apiVersion)
		}
	}
	return list, nil
}
