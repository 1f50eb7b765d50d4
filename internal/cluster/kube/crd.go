package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

func crdResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
}

// InstallCRDs creates the CRDs that do not exist yet and leaves existing
// ones alone: like Helm, a chart's crds/ directory is installed, never
// upgraded. It then waits, by watch, until all of them are Established and
// their kinds are served by discovery, so that the objects using them can be
// parsed and applied with this same Client.
func (c *Client) InstallCRDs(ctx context.Context, crds []*unstructured.Unstructured) (CRDWrites, error) {
	var w CRDWrites
	if err := checkCRDs(crds); err != nil {
		return w, err
	}
	for _, crd := range crds {
		ref := RefOf(crd)
		ref.Namespace = "" // cluster-scoped, whatever the manifest says
		_, err := c.dynamic.Resource(crdResource()).Create(ctx, crd, metav1.CreateOptions{FieldManager: c.fieldManager})
		switch {
		case apierrors.IsAlreadyExists(err):
			w.add(crdUnchanged)
		case err != nil:
			return w, objectError(ref, fmt.Errorf("create: %w", err))
		default:
			w.add(crdCreated)
		}
	}
	if len(crds) == 0 {
		return w, nil
	}
	return w, c.waitCRDs(ctx, crds)
}

// CRDWrites count what writing a chart's CRDs did: created, replaced with
// a changed spec, labels or annotations, and left as they were (the
// chart's already, or existing under the create policy).
type CRDWrites struct {
	Created, Replaced, Unchanged int
}

// crdWrite is what writing one CRD did.
type crdWrite int

const (
	crdUnchanged crdWrite = iota
	crdCreated
	crdReplaced
)

func (w *CRDWrites) add(did crdWrite) {
	switch did {
	case crdCreated:
		w.Created++
	case crdReplaced:
		w.Replaced++
	default:
		w.Unchanged++
	}
}

// String is "2 created, 1 replaced, 22 unchanged", the counts that are
// not zero ("none" when all are).
func (w CRDWrites) String() string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{w.Created, "created"}, {w.Replaced, "replaced"}, {w.Unchanged, "unchanged"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// checkCRDs refuses what is not an apiextensions.k8s.io/v1 CRD.
func checkCRDs(crds []*unstructured.Unstructured) error {
	for _, crd := range crds {
		if ref := RefOf(crd); ref.GroupVersionKind() != (schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}) {
			return objectErrorf(ref, "not an apiextensions.k8s.io/v1 CustomResourceDefinition")
		}
	}
	return nil
}

// waitCRDs waits until crds are Established and their served versions
// are in discovery.
func (c *Client) waitCRDs(ctx context.Context, crds []*unstructured.Unstructured) error {
	refs := make([]Ref, 0, len(crds))
	for _, crd := range crds {
		ref := RefOf(crd)
		ref.Namespace = ""
		refs = append(refs, ref)
	}
	// kstatus's CRD rule: Established, failed when the names are not
	// accepted.
	if err := c.wait(ctx, refs, modeReady, nil); err != nil {
		return err
	}
	c.resetMapper()
	return c.waitServed(ctx, crds)
}

// waitServed bridges the short gap between a CRD being Established and
// discovery listing its kinds, re-reading discovery until each served
// version resolves.
func (c *Client) waitServed(ctx context.Context, crds []*unstructured.Unstructured) error {
	for _, crd := range crds {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			version, _ := v.(map[string]any)
			name, _ := version["name"].(string)
			if served, _ := version["served"].(bool); !served || name == "" {
				continue
			}
			gk := schema.GroupKind{Group: group, Kind: kind}
			err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
				_, err := c.mapper.RESTMapping(gk, name)
				if meta.IsNoMatchError(err) {
					c.resetMapper()
					return false, nil
				}
				return err == nil, err
			})
			if err != nil {
				return objectError(RefOf(crd), fmt.Errorf("%s/%s %s not served by discovery: %w", group, name, kind, err))
			}
		}
	}
	return nil
}
