package ctl

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/stackset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// GroupApproveRequest says which group of a StackSet's identical plans
// to approve (convoy stackset approve).
type GroupApproveRequest struct {
	Namespace, Name string
	// Like names a Stack of the group: the Stacks waiting with the same
	// plan as it are approved. Empty: the one group of plans waiting.
	Like string
	// Step, when set, approves only the Stacks of that step.
	Step string
}

// GroupApproved is a group approval: the plan, each Stack's approval,
// and the Stacks still waiting with other plans.
type GroupApproved struct {
	Plan     string
	Stacks   []string
	Approved []*Approved
	// Others are the Stacks left waiting, each with its plan.
	Others []string
}

// ApproveGroup approves, as the user c authenticates as, the current plan
// of every Stack of the StackSet that waits for approval with the same
// plan (stackset.PlanOf: the same releases changed the same way). Each is
// a Stack approval (ApprovePlan: an entry naming the user, written with
// the resourceVersion the plan was read at), so the admission policy asks
// for the verb approve on each Stack, as for convoy approve: approving a
// group is no more than approving each of its Stacks. The first refusal
// stops it; the error names the Stacks approved before.
func ApproveGroup(ctx context.Context, c client.Client, req GroupApproveRequest) (*GroupApproved, error) {
	ss, err := GetStackSet(ctx, c, req.Namespace, req.Name)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("convoy.dev/v1alpha1 StackSet %s/%s", req.Namespace, req.Name)
	steps := map[string]string{}
	for _, s := range ss.Status.Stacks {
		steps[s.Name] = s.Step
	}
	if req.Step != "" && !slices.Contains(slices.Collect(maps.Values(steps)), req.Step) {
		return nil, &ApproveError{fmt.Sprintf("%s has no Stack in step %q", what, req.Step)}
	}
	var l v1alpha1.StackList
	if err := c.List(ctx, &l, client.InNamespace(req.Namespace), client.MatchingLabels{v1alpha1.StackSetLabel: req.Name}); err != nil {
		return nil, fmt.Errorf("list the Stacks of %s: %w", what, err)
	}
	waiting := map[string][]*v1alpha1.Stack{}
	var like *v1alpha1.Stack
	for i := range l.Items {
		st := &l.Items[i]
		if ref := metav1.GetControllerOf(st); ref == nil || ref.UID != ss.UID {
			continue
		}
		if st.Name == req.Like {
			like = st
		}
		if req.Step != "" && steps[st.Name] != req.Step {
			continue
		}
		if awaitsApproval(st) {
			p := stackset.PlanOf(st)
			waiting[p] = append(waiting[p], st)
		}
	}
	var plan string
	switch {
	case req.Like != "" && like == nil:
		return nil, &ApproveError{fmt.Sprintf("%s has no Stack %s", what, req.Like)}
	case req.Like != "" && !awaitsApproval(like):
		return nil, &ApproveError{fmt.Sprintf("%s: Stack %s waits for no approval (%s)", what, req.Like, stackset.PlanOf(like))}
	case req.Like != "":
		plan = stackset.PlanOf(like)
		if req.Step != "" && steps[like.Name] != req.Step {
			return nil, &ApproveError{fmt.Sprintf("%s: Stack %s is in step %q, not %q", what, like.Name, steps[like.Name], req.Step)}
		}
	case len(waiting) == 0:
		return nil, &ApproveError{what + ": no Stack waits for approval" + inStep(req.Step)}
	case len(waiting) > 1:
		var groups []string
		for _, p := range slices.Sorted(maps.Keys(waiting)) {
			groups = append(groups, fmt.Sprintf("%s (%s, e.g. --like %s)", p, Count(len(waiting[p]), "Stack", "Stacks"), waiting[p][0].Name))
		}
		return nil, &ApproveError{fmt.Sprintf("%s: %d different plans wait for approval%s: %s: say which with --like STACK", what, len(waiting), inStep(req.Step), strings.Join(groups, "; "))}
	default:
		for p := range waiting {
			plan = p
		}
	}
	out := &GroupApproved{Plan: plan}
	group := waiting[plan]
	slices.SortFunc(group, func(a, b *v1alpha1.Stack) int { return strings.Compare(a.Name, b.Name) })
	for _, st := range group {
		a, err := approveInGroup(ctx, c, st, plan)
		if err != nil {
			if len(out.Stacks) > 0 {
				return out, fmt.Errorf("%w (approved before: %s)", err, strings.Join(out.Stacks, ", "))
			}
			return out, err
		}
		out.Stacks = append(out.Stacks, st.Name)
		out.Approved = append(out.Approved, a)
	}
	for _, p := range slices.Sorted(maps.Keys(waiting)) {
		if p == plan {
			continue
		}
		for _, st := range waiting[p] {
			out.Others = append(out.Others, st.Name+": "+p)
		}
	}
	return out, nil
}

// awaitsApproval: the Stack's current plan waits for approval.
func awaitsApproval(st *v1alpha1.Stack) bool {
	c := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.CondReady)
	return c != nil && c.Reason == v1alpha1.ReasonApprovalRequired && st.Status.ObservedGeneration == st.Generation &&
		st.Status.Plan != nil && st.Status.Plan.Digest != ""
}

func inStep(step string) string {
	if step == "" {
		return ""
	}
	return " in step " + step
}

// approveInGroup approves the Stack's current plan if it is still the
// group's: a write that conflicts (the Stack changed since it was read,
// by its controller) is tried again on the Stack read again, as long as
// its plan is still the group's.
func approveInGroup(ctx context.Context, c client.Client, st *v1alpha1.Stack, plan string) (*Approved, error) {
	for try := 0; ; try++ {
		a, err := ApprovePlan(ctx, c, ApproveRequest{Namespace: st.Namespace, Name: st.Name, Plan: st.Status.Plan.Digest})
		if !apierrors.IsConflict(err) || try == 4 {
			return a, err
		}
		var again v1alpha1.Stack
		if err := c.Get(ctx, client.ObjectKeyFromObject(st), &again); err != nil {
			return nil, fmt.Errorf("convoy.dev/v1alpha1 Stack %s/%s: %w", st.Namespace, st.Name, err)
		}
		if !awaitsApproval(&again) || stackset.PlanOf(&again) != plan {
			return nil, &ApproveError{fmt.Sprintf("convoy.dev/v1alpha1 Stack %s/%s: its plan changed while it was approved: %s", st.Namespace, st.Name, stackset.PlanOf(&again))}
		}
		st = &again
	}
}
