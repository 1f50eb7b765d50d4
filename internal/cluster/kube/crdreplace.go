package kube

import (
	"context"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ReplaceCRDs creates the CRDs that do not exist yet and replaces the
// existing ones with these (a release's crds = "create_replace", Flux's
// CreateReplace): spec, labels and annotations become the chart's (labels
// and annotations others added are kept); status, and with it
// status.storedVersions, is the API server's. It never deletes a CRD. It
// then waits as InstallCRDs does, and says how many it created, changed
// and found as the chart has them.
func (c *Client) ReplaceCRDs(ctx context.Context, crds []*unstructured.Unstructured) (CRDWrites, error) {
	var w CRDWrites
	if err := checkCRDs(crds); err != nil {
		return w, err
	}
	for _, crd := range crds {
		_, did, err := c.replaceCRD(ctx, crd, false)
		if err != nil {
			return w, err
		}
		w.add(did)
	}
	if len(crds) == 0 {
		return w, nil
	}
	return w, c.waitCRDs(ctx, crds)
}

// ReplaceCRD creates crd, or replaces the live one with it (an update
// conditional on the resourceVersion it read, tried again once if another
// writer got there first), and returns the result. With dryRun the API
// server validates and defaults it without storing it: what a plan
// compares with the live CRD.
func (c *Client) ReplaceCRD(ctx context.Context, crd *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	out, _, err := c.replaceCRD(ctx, crd, dryRun)
	return out, err
}

// replaceCRD is ReplaceCRD, saying what it did: an update the API server
// stores nothing of (the live CRD is the chart's already) keeps the
// resourceVersion, and is unchanged.
func (c *Client) replaceCRD(ctx context.Context, crd *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, crdWrite, error) {
	ref := RefOf(crd)
	ref.Namespace = ""
	var dry []string
	if dryRun {
		dry = []string{metav1.DryRunAll}
	}
	res := c.dynamic.Resource(crdResource())
	for attempt := 0; ; attempt++ {
		live, err := res.Get(ctx, crd.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			out, err := res.Create(ctx, crd, metav1.CreateOptions{FieldManager: c.fieldManager, DryRun: dry})
			if err != nil {
				return nil, 0, objectError(ref, fmt.Errorf("create: %w", err))
			}
			if !dryRun {
				c.wrote(ref)
			}
			return out, crdCreated, nil
		}
		if err != nil {
			return nil, 0, objectError(ref, fmt.Errorf("read: %w", err))
		}
		next := replacement(crd, live)
		out, err := res.Update(ctx, next, metav1.UpdateOptions{FieldManager: c.fieldManager, DryRun: dry})
		if apierrors.IsConflict(err) && attempt == 0 {
			continue
		}
		if err != nil {
			return nil, 0, objectError(ref, fmt.Errorf("replace: %w", err))
		}
		if out.GetResourceVersion() == live.GetResourceVersion() {
			return out, crdUnchanged, nil
		}
		if !dryRun {
			c.wrote(ref) // what the API server admits may have changed
		}
		return out, crdReplaced, nil
	}
}

// replacement is crd as an update of live: live's identity and
// resourceVersion, the union of their labels and annotations (crd's win).
func replacement(crd, live *unstructured.Unstructured) *unstructured.Unstructured {
	next := crd.DeepCopy()
	next.SetNamespace("")
	next.SetResourceVersion(live.GetResourceVersion())
	next.SetUID(live.GetUID())
	merge := func(have, want map[string]string) map[string]string {
		if len(have) == 0 {
			return want
		}
		out := maps.Clone(have)
		maps.Copy(out, want)
		return out
	}
	next.SetLabels(merge(live.GetLabels(), crd.GetLabels()))
	next.SetAnnotations(merge(live.GetAnnotations(), crd.GetAnnotations()))
	return next
}
