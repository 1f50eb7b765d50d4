package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// IsImmutable recognises the API server's refusal to change fields that
// cannot change (a Deployment's selector, a Job's template, a Service's
// clusterIP, a StatefulSet's volumeClaimTemplates): the object must be
// replaced. Every cause of the refusal must be such a field: an object
// that is also invalid otherwise is just invalid.
func IsImmutable(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	var causes []metav1.StatusCause
	if d := status.Status().Details; d != nil {
		causes = d.Causes
	}
	if len(causes) == 0 {
		return immutableMessage(err.Error())
	}
	for _, c := range causes {
		if !immutableMessage(c.Message) {
			return false
		}
	}
	return true
}

func immutableMessage(msg string) bool {
	for _, s := range []string{"field is immutable", "may not change once set", "is immutable",
		// apps/v1 validation of a StatefulSet update: only these fields may change.
		"updates to statefulset spec for fields other than"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// replace deletes the live object ref, waits until it is gone and applies
// obj anew: a StatefulSet with its dependents orphaned (its pods and
// claims stay, and the new StatefulSet adopts the pods), anything else
// with its dependents deleted in the background. A dry run only validates obj: the server refused nothing but
// its immutable fields.
func (c *Client) replace(ctx context.Context, obj *unstructured.Unstructured, ref Ref, opts ApplyOptions) (Result, error) {
	if opts.DryRun != DryRunNone {
		return Result{Ref: ref, Action: ActionReplaced}, nil
	}
	prop := PropagationBackground
	if ref.Group == "apps" && ref.Kind == "StatefulSet" {
		prop = PropagationOrphan
	}
	if _, err := c.Delete(ctx, []Ref{ref}, DeleteOptions{Propagation: prop, Wait: true}); err != nil {
		return Result{}, fmt.Errorf("replace %s: %w", ref, err)
	}
	opts.Replace = nil
	res, err := c.applyOne(ctx, obj, opts)
	if err != nil {
		return Result{}, fmt.Errorf("replace %s: deleted, but creating it again failed: %w", ref, err)
	}
	res.Action = ActionReplaced
	return res, nil
}
