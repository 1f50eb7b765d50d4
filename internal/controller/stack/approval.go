package stack

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
)

// needsApproval says whether a plan with changes is applied only once
// approved: with manual approval; a plan whose policy denials are
// overridden (the override is an approval); a drift fix without drift
// correction.
func needsApproval(st *v1alpha1.Stack, p *v1alpha1.PlanStatus) bool {
	switch {
	case len(p.DeniedBy) > 0:
		return true
	case p.DriftOnly && st.Spec.DriftCorrection:
		return false
	case st.Spec.Approval == v1alpha1.ApprovalManual:
		return true
	}
	return p.DriftOnly
}

// approvalOf says who approved the plan of digest and whether that is
// enough (spec.approvals.required distinct users).
func approvalOf(st *v1alpha1.Stack, digest string) (v1alpha1.ApprovalStatus, bool) {
	return st.Spec.ApprovalOf(digest)
}

// recordApproval sets status.approval: who approved the current plan, when
// it needs approval and is not applied without.
func recordApproval(st *v1alpha1.Stack) {
	p := st.Status.Plan
	if p == nil || !p.HasChanges || !needsApproval(st, p) {
		st.Status.Approval = nil
		return
	}
	a, _ := approvalOf(st, p.Digest)
	st.Status.Approval = &a
}

// approvedByText says who approved: "alice, bob", or that it is not
// recorded.
func approvedByText(a *v1alpha1.ApprovalStatus) string {
	if a == nil {
		return ""
	}
	if a.Unrecorded {
		return "unrecorded (spec.approvedPlan without an approval entry)"
	}
	return strings.Join(a.ApprovedBy, ", ")
}

// approvalNote is what the release records and the Applied event add: who
// approved the plan ("" for a plan applied without approval).
func approvalNote(a *v1alpha1.ApprovalStatus) string {
	if a == nil {
		return ""
	}
	return "approved by " + approvedByText(a)
}

// approvalWaits is the message of a plan that has fewer approvals than it
// needs.
func approvalWaits(st *v1alpha1.Stack, p *v1alpha1.PlanStatus) string {
	a, _ := approvalOf(st, p.Digest)
	if len(a.ApprovedBy) == 0 {
		if a.Required > 1 {
			return fmt.Sprintf("plan %s (%s) waits for approval by %d users (convoy approve %s -n %s)", p.Digest, p.Summary, a.Required, st.Name, st.Namespace)
		}
		return fmt.Sprintf("plan %s (%s) waits for approval: set spec.approvedPlan to its digest (convoy approve %s -n %s)", p.Digest, p.Summary, st.Name, st.Namespace)
	}
	return fmt.Sprintf("plan %s (%s) has %d of %d approvals (%s): it waits for %d more by other users (convoy approve %s -n %s)",
		p.Digest, p.Summary, len(a.ApprovedBy), a.Required, strings.Join(a.ApprovedBy, ", "), int(a.Required)-len(a.ApprovedBy), st.Name, st.Namespace)
}

// approvalApplied is the approval the plan of digest is applied with (nil:
// it needs none).
func approvalApplied(st *v1alpha1.Stack, digest string) *v1alpha1.ApprovalStatus {
	p := st.Status.Plan
	if p == nil || p.Digest != digest || !needsApproval(st, p) {
		return nil
	}
	a, _ := approvalOf(st, digest)
	return &a
}

// promotionNote is who approved the Pipeline stage that pinned the Stack
// to the source digest its plan applies: "approved by alice (Pipeline
// delivery/shop, stage production)", "" when no manual stage did. The
// Pipeline is the one the Stack's convoy.dev/pipeline annotation names,
// read uncached as the controller; its approval counts only when that
// stage names this Stack and the approval is of this digest (the
// Pipeline's approvals are the approval policy's to guard, the annotation
// is not).
func (r *reconciler) promotionNote(ctx context.Context, st *v1alpha1.Stack, sourceDigest string) string {
	owner, ok := v1alpha1.PipelineOwner(st)
	if !ok || sourceDigest == "" {
		return ""
	}
	var p v1alpha1.Pipeline
	if err := r.reader.Get(ctx, owner, &p); err != nil {
		return ""
	}
	me := types.NamespacedName{Namespace: st.Namespace, Name: st.Name}
	for _, stage := range p.Spec.Stages {
		if stage.Approval != v1alpha1.ApprovalManual || !slices.ContainsFunc(stage.Stacks, func(ref v1alpha1.PipelineStackRef) bool { return ref.In(p.Namespace) == me }) {
			continue
		}
		if a, ok := p.Spec.ApprovalFor(stage.Name, sourceDigest); ok {
			return fmt.Sprintf("approved by %s (Pipeline %s/%s, stage %s)", cmp.Or(a.ApprovedBy, "unrecorded"), p.Namespace, p.Name, stage.Name)
		}
	}
	return ""
}
