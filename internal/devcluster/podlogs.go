package devcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Pod logs: kwok serves the kubelet's containerLogs endpoint, and
// kube-apiserver reaches it at each node's InternalIP (127.0.0.1) and
// kubelet port, so `kubectl logs` and the pods/log subresource work. What a
// container "logged" is a file on this machine named by a kwok Logs object
// (kwok.x-k8s.io/v1alpha1, namespace and name of the pod) or, for pods
// without one, a ClusterLogs object whose selector matches the pod; a
// container without either has no logs ("no logs found for container").

var (
	crdGVR         = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	logsGVR        = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "logs"}
	clusterLogsGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "clusterlogs"}
)

// logsKinds are the kwok kinds the devcluster serves (kwok --enable-crds).
var logsKinds = []struct{ kind, plural, scope string }{
	{"Logs", "logs", "Namespaced"},
	{"ClusterLogs", "clusterlogs", "Cluster"},
}

// logsCRD is one of kwok's logs kinds, with an open schema: kwok validates
// what it reads, and the devcluster only needs the API to store it.
func logsCRD(kind, plural, scope string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + ".kwok.x-k8s.io"},
		"spec": map[string]any{
			"group": "kwok.x-k8s.io",
			"names": map[string]any{"kind": kind, "listKind": kind + "List", "plural": plural, "singular": strings.ToLower(kind)},
			"scope": scope,
			"versions": []any{map[string]any{
				"name": "v1alpha1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type":                                 "object",
					"x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
}

// createLogsCRDs creates kwok's logs kinds; waitLogsCRDs waits until they
// are served, before kwok starts watching them.
func createLogsCRDs(ctx context.Context, dyn dynamic.Interface) error {
	for _, k := range logsKinds {
		_, err := dyn.Resource(crdGVR).Create(ctx, logsCRD(k.kind, k.plural, k.scope), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("apiextensions.k8s.io/v1 CustomResourceDefinition %s.kwok.x-k8s.io: %w", k.plural, err)
		}
	}
	return nil
}

func waitLogsCRDs(ctx context.Context, dyn dynamic.Interface) error {
	for _, k := range logsKinds {
		name := k.plural + ".kwok.x-k8s.io"
		for {
			crd, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err == nil && established(crd) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("apiextensions.k8s.io/v1 CustomResourceDefinition %s: not established: %w", name, errors.Join(ctx.Err(), err))
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

// kwokCRDs is kwok's --enable-crds.
func kwokCRDs() string {
	var kinds []string
	for _, k := range logsKinds {
		kinds = append(kinds, k.kind)
	}
	return strings.Join(kinds, ",")
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// writeCRILog writes lines as one container's stdout in the CRI log format
// (what kwok serves).
func writeCRILog(file string, lines []string) error {
	var b strings.Builder
	ts := time.Now().UTC()
	for i, l := range lines {
		fmt.Fprintf(&b, "%s stdout F %s\n", ts.Add(time.Duration(i)*time.Millisecond).Format(time.RFC3339Nano), l)
	}
	return os.WriteFile(file, []byte(b.String()), 0o600)
}

// WritePodLog makes file the log of every container of the pod
// namespace/name, with the lines as its stdout. The pod need not exist
// yet; the lines are served once kwok has seen the Logs object, normally
// within milliseconds. A pod's Logs wins over NamespaceLog's.
func WritePodLog(ctx context.Context, cfg *rest.Config, namespace, name, file string, lines []string) error {
	if err := writeCRILog(file, lines); err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "Logs",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec":       map[string]any{"logs": []any{map[string]any{"logsFile": file}}},
	}}
	return create(ctx, cfg, logsGVR, namespace, obj)
}

// WriteNamespaceLog makes file the log of every container of every pod in
// namespace (but those with their own WritePodLog), with the lines as its
// stdout, through a ClusterLogs object named after the namespace, which
// the caller deletes (DeleteNamespaceLog) when done.
func WriteNamespaceLog(ctx context.Context, cfg *rest.Config, namespace, file string, lines []string) error {
	if err := writeCRILog(file, lines); err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "ClusterLogs",
		"metadata":   map[string]any{"name": namespace},
		"spec": map[string]any{
			"selector": map[string]any{"matchNamespaces": []any{namespace}},
			"logs":     []any{map[string]any{"logsFile": file}},
		},
	}}
	return create(ctx, cfg, clusterLogsGVR, "", obj)
}

// DeleteNamespaceLog deletes WriteNamespaceLog's object.
func DeleteNamespaceLog(ctx context.Context, cfg *rest.Config, namespace string) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	err = dyn.Resource(clusterLogsGVR).Delete(ctx, namespace, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func create(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, namespace string, obj *unstructured.Unstructured) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var ri dynamic.ResourceInterface = dyn.Resource(gvr)
	if namespace != "" {
		ri = dyn.Resource(gvr).Namespace(namespace)
	}
	if _, err := ri.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			// Creating can only be "not found" when the kind is not served.
			err = fmt.Errorf("%w (a devcluster started by code older than its pod logs does not serve kwok's logs kinds: restart it)", err)
		}
		if namespace != "" {
			return fmt.Errorf("kwok.x-k8s.io/v1alpha1 %s %s/%s: %w", obj.GetKind(), namespace, obj.GetName(), err)
		}
		return fmt.Errorf("kwok.x-k8s.io/v1alpha1 %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}
