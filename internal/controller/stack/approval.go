package stack

import (
	"fmt"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
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
