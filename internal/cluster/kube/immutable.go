package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
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
// obj anew, leaving no pod of the old object that would block the new one:
//
//   - A StatefulSet is deleted with its dependents orphaned (its pods and
//     claims stay, and the new StatefulSet adopts the pods, as after
//     `kubectl delete statefulset --cascade=orphan`). The orphaned pods it
//     cannot adopt are deleted, and waited for until gone, before it is
//     created again: those its new selector does not select (a selector
//     holding the release name, after a rename), which would otherwise
//     keep their names and the StatefulSet from creating its pods, and all
//     of them when it adds a volumeClaimTemplates entry (the controller
//     would add the claim's volume to them, and the API server refuses pod
//     updates that change volumes). It creates them anew with their
//     claims (plan.StatefulSetAdoptsPods decides the same for the plan).
//   - A Deployment, ReplicaSet, DaemonSet or Job is deleted with
//     foreground propagation, and its pods are waited for until gone: the
//     new one starts with none of the old one's pods left, orphaned and
//     still running the old template.
//   - Anything else is deleted with its dependents in the background.
//
// A dry run only validates obj: the server refused nothing but its
// immutable fields.
func (c *Client) replace(ctx context.Context, obj, live *unstructured.Unstructured, ref Ref, opts ApplyOptions) (Result, error) {
	if opts.DryRun != DryRunNone {
		return Result{Ref: ref, Action: ActionReplaced}, nil
	}
	prop := PropagationBackground
	var orphans, pods []Ref
	var err error
	switch {
	case ref.Group == "apps" && ref.Kind == "StatefulSet":
		prop = PropagationOrphan
		orphans, err = c.unadoptedPods(ctx, live, obj)
	case ownsPods(ref):
		prop = PropagationForeground
		pods, err = c.dependentPods(ctx, live)
	}
	if err != nil {
		return Result{}, fmt.Errorf("replace %s: %w", ref, err)
	}
	if _, err := c.Delete(ctx, []Ref{ref}, DeleteOptions{Propagation: prop, Wait: true}); err != nil {
		return Result{}, fmt.Errorf("replace %s: %w", ref, err)
	}
	if len(orphans) > 0 {
		if _, err := c.Delete(ctx, orphans, DeleteOptions{Wait: true}); err != nil {
			return Result{}, fmt.Errorf("replace %s: deleted, but deleting its pods, which the new one cannot adopt, failed: %w", ref, err)
		}
	}
	if len(pods) > 0 {
		if err := c.WaitForDelete(ctx, pods); err != nil {
			return Result{}, fmt.Errorf("replace %s: deleted, but its pods are not gone: %w", ref, err)
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

// ownsPods: ref's kind makes pods (through ReplicaSets, for a Deployment)
// that a foreground deletion deletes first.
func ownsPods(ref Ref) bool {
	switch ref.Group + "/" + ref.Kind {
	case "apps/Deployment", "apps/ReplicaSet", "apps/DaemonSet", "batch/Job":
		return true
	}
	return false
}

// unadoptedPods are the pods of StatefulSet live that next, replacing
// it, does not adopt: all of them when next adds a volumeClaimTemplates
// entry, else those next's selector does not select.
func (c *Client) unadoptedPods(ctx context.Context, live, next *unstructured.Unstructured) ([]Ref, error) {
	pods, err := c.podsOf(ctx, live.GetNamespace(), live.GetUID())
	if err != nil {
		return nil, err
	}
	claims := adoptsPods(live.Object, next.Object)
	sel, err := selectorOf(next)
	if err != nil {
		return nil, fmt.Errorf("the selector of %s: %w", RefOf(next), err)
	}
	var out []Ref
	for _, p := range pods {
		if !claims || !sel.Matches(labels.Set(p.GetLabels())) {
			out = append(out, RefOf(p))
		}
	}
	return out, nil
}

// dependentPods are the pods whose controller is owner, or, for a
// Deployment, one of its ReplicaSets.
func (c *Client) dependentPods(ctx context.Context, owner *unstructured.Unstructured) ([]Ref, error) {
	owners := map[types.UID]bool{owner.GetUID(): true}
	if owner.GetKind() == "Deployment" {
		sets, err := c.List(ctx, "apps/v1", "ReplicaSet", owner.GetNamespace(), metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list the ReplicaSets of %s/%s: %w", owner.GetNamespace(), owner.GetName(), err)
		}
		for _, rs := range sets {
			if ctrl := metav1.GetControllerOf(rs); ctrl != nil && ctrl.UID == owner.GetUID() {
				owners[rs.GetUID()] = true
			}
		}
	}
	pods, err := c.List(ctx, "v1", "Pod", owner.GetNamespace(), metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the pods of %s/%s: %w", owner.GetNamespace(), owner.GetName(), err)
	}
	var out []Ref
	for _, p := range pods {
		if ctrl := metav1.GetControllerOf(p); ctrl != nil && owners[ctrl.UID] {
			out = append(out, RefOf(p))
		}
	}
	return out, nil
}

// podsOf are the pods of namespace whose controller has uid.
func (c *Client) podsOf(ctx context.Context, namespace string, uid types.UID) ([]*unstructured.Unstructured, error) {
	pods, err := c.List(ctx, "v1", "Pod", namespace, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the pods of namespace %s: %w", namespace, err)
	}
	var out []*unstructured.Unstructured
	for _, p := range pods {
		if ctrl := metav1.GetControllerOf(p); ctrl != nil && ctrl.UID == uid {
			out = append(out, p)
		}
	}
	return out, nil
}

// selectorOf is obj's spec.selector as a labels.Selector (one that
// selects nothing when obj has none).
func selectorOf(obj *unstructured.Unstructured) (labels.Selector, error) {
	m, found, _ := unstructured.NestedMap(obj.Object, "spec", "selector")
	if !found {
		return labels.Nothing(), nil
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ls); err != nil {
		return nil, err
	}
	return metav1.LabelSelectorAsSelector(&ls)
}

// adoptsPods reports whether a StatefulSet replaced by next keeps the
// pods live made once it selects them: every volumeClaimTemplates entry
// of next is one of live's (see plan.StatefulSetAdoptsPods).
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
