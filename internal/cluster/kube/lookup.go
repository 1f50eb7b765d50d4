package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Lookup returns the implementation of the chart template function
// `lookup apiVersion kind namespace name` against the live cluster, with
// Helm's semantics: one object as a map (empty if it does not exist), or,
// with an empty name, the list {"items": [...]} (across all namespaces when
// namespace is empty).
func (c *Client) Lookup(ctx context.Context) func(apiVersion, kind, namespace, name string) (map[string]any, error) {
	return func(apiVersion, kind, namespace, name string) (map[string]any, error) {
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return nil, err
		}
		m, err := c.mapping(gv.WithKind(kind))
		if err != nil {
			return nil, err
		}
		res := c.dynamic.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace && namespace != "" {
			nsRes := res.Namespace(namespace)
			if name != "" {
				u, err := nsRes.Get(ctx, name, metav1.GetOptions{})
				return lookupResult(u.UnstructuredContent, err)
			}
			l, err := nsRes.List(ctx, metav1.ListOptions{})
			return lookupResult(l.UnstructuredContent, err)
		}
		if name != "" {
			u, err := res.Get(ctx, name, metav1.GetOptions{})
			return lookupResult(u.UnstructuredContent, err)
		}
		l, err := res.List(ctx, metav1.ListOptions{})
		return lookupResult(l.UnstructuredContent, err)
	}
}

func lookupResult(content func() map[string]any, err error) (map[string]any, error) {
	if apierrors.IsNotFound(err) {
		return map[string]any{}, nil
	}
	if err != nil {
		// As Helm's: an object the caller may not read fails the render
		// (it is no more absent than a forbidden list is empty), named
		// with the caller, the verb and the resource.
		return nil, Forbidden(err)
	}
	return content(), nil
}

// List lists the objects of a kind in a namespace ("" for a cluster-scoped
// kind, or for every namespace), with opts' selectors. Each item carries
// its apiVersion and kind.
func (c *Client) List(ctx context.Context, apiVersion, kind, namespace string, opts metav1.ListOptions) ([]*unstructured.Unstructured, error) {
	gvr, namespace, err := c.listTarget(apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	l, err := c.dynamic.Resource(gvr).Namespace(namespace).List(ctx, opts)
	if err != nil {
		return nil, Forbidden(err)
	}
	out := make([]*unstructured.Unstructured, len(l.Items))
	for i := range l.Items {
		u := &l.Items[i]
		if u.GetKind() == "" {
			u.SetAPIVersion(apiVersion)
			u.SetKind(kind)
		}
		out[i] = u
	}
	return out, nil
}

// listTarget is the resource a list of kind asks for, and the namespace to
// list it in: "" for a cluster-scoped kind (or for every namespace).
func (c *Client) listTarget(apiVersion, kind, namespace string) (schema.GroupVersionResource, string, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, "", err
	}
	m, err := c.mapping(gv.WithKind(kind))
	if err != nil {
		return schema.GroupVersionResource{}, "", err
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		namespace = ""
	}
	return m.Resource, namespace, nil
}
