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
// claims stay, and the new StatefulSet adopts the pods, as after
// `kubectl delete statefulset --cascade=orphan`), anything else with its
// dependents deleted in the background. A StatefulSet that adds a
// volumeClaimTemplates entry cannot adopt the old pods (the controller
// would add the claim's volume to them, and the API server refuses pod
// updates that change volumes): its orphaned pods are deleted before it is
// created again, and it creates them anew with their claims
// (plan.StatefulSetAdoptsPods decides the same for the plan). A dry run
// only validates obj: the server refused nothing but its immutable fields.
func (c *Client) replace(ctx context.Context, obj, live *unstructured.Unstructured, ref Ref, opts ApplyOptions) (Result, error) {
	if opts.DryRun != DryRunNone {
		return Result{Ref: ref, Action: ActionReplaced}, nil
	}
	prop := PropagationBackground
	var pods []Ref
	if ref.Group == "apps" && ref.Kind == "StatefulSet" {
		prop = PropagationOrphan
		if !adoptsPods(live.Object, obj.Object) {
			var err error
			if pods, err = c.podsOwnedBy(ctx, live); err != nil {
				return Result{}, fmt.Errorf("replace %s: %w", ref, err)
			}
		}
	}
	if _, err := c.Delete(ctx, []Ref{ref}, DeleteOptions{Propagation: prop, Wait: true}); err != nil {
		return Result{}, fmt.Errorf("replace %s: %w", ref, err)
	}
	if len(pods) > 0 {
		if _, err := c.Delete(ctx, pods, DeleteOptions{Wait: true}); err != nil {
			return Result{}, fmt.Errorf("replace %s: deleted, but deleting its pods, which the new one cannot adopt, failed: %w", ref, err)
		}
	}
	opts.Replace = nil
	res, err := c.applyOne(ctx, obj, opts)
	if err != nil {
		return Result{}, fmt.Errorf("replace %s: deleted, but creating it again failed: %w", ref, err)
	}
	res.Action = ActionReplaced
	return res, nil
}

// adoptsPods reports whether a StatefulSet replaced by next adopts the
// pods live made: every volumeClaimTemplates entry of next is one of
// live's (see plan.StatefulSetAdoptsPods).
func adoptsPods(live, next map[string]any) bool {
	names := func(obj map[string]any) map[string]bool {
		out := map[string]bool{}
		ts, _, _ := unstructured.NestedSlice(obj, "spec", "volumeClaimTemplates")
		for _, t := range ts {
			if m, ok := t.(map[string]any); ok {
				if name, _, _ := unstructured.NestedString(m, "metadata", "name"); name != "" {
					out[name] = true
				}
			}
		}
		return out
	}
	had := names(live)
	for name := range names(next) {
		if !had[name] {
			return false
		}
	}
	return true
}

// podsOwnedBy are the pods whose controller is owner.
func (c *Client) podsOwnedBy(ctx context.Context, owner *unstructured.Unstructured) ([]Ref, error) {
	pods, err := c.List(ctx, "v1", "Pod", owner.GetNamespace(), metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the pods of %s/%s: %w", owner.GetNamespace(), owner.GetName(), err)
	}
	var out []Ref
	for _, p := range pods {
		if ctrl := metav1.GetControllerOf(p); ctrl != nil && ctrl.UID == owner.GetUID() {
			out = append(out, RefOf(p))
		}
	}
	return out, nil
}
