package controller

import (
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/plan"
)

func TestMayApply(t *testing.T) {
	const d = "sha256:aa"
	for _, tc := range []struct {
		name     string
		approval v1alpha1.Approval
		approved string
		drift    bool // the plan only restores drift
		correct  bool // spec.driftCorrection
		want     bool
	}{
		{name: "auto", want: true},
		{name: "auto, drift only, no correction", drift: true, want: false},
		{name: "auto, drift only, no correction, approved", drift: true, approved: d, want: true},
		{name: "auto, drift only, no correction, another approved", drift: true, approved: "sha256:bb", want: false},
		{name: "auto, drift only, correction", drift: true, correct: true, want: true},
		{name: "manual, unapproved", approval: v1alpha1.ApprovalManual, want: false},
		{name: "manual, another digest", approval: v1alpha1.ApprovalManual, approved: "sha256:bb", want: false},
		{name: "manual, approved", approval: v1alpha1.ApprovalManual, approved: d, want: true},
		{name: "manual, drift only, correction", approval: v1alpha1.ApprovalManual, drift: true, correct: true, want: true},
		{name: "manual, drift only, no correction, approved", approval: v1alpha1.ApprovalManual, approved: d, drift: true, want: true},
		{name: "manual, drift only, no correction", approval: v1alpha1.ApprovalManual, drift: true, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &v1alpha1.Stack{Spec: v1alpha1.StackSpec{Approval: tc.approval, ApprovedPlan: tc.approved, DriftCorrection: tc.correct}}
			if got := mayApply(st, &v1alpha1.PlanStatus{Digest: d, HasChanges: true, DriftOnly: tc.drift}); got != tc.want {
				t.Fatalf("mayApply = %v", got)
			}
		})
	}
}

func TestIsDriftOnly(t *testing.T) {
	drift := plan.Reason{Kind: plan.ReasonDrift}
	values := plan.Reason{Kind: plan.ReasonValues}
	rc := func(a plan.Action, rs ...plan.Reason) *plan.ReleaseChange {
		return &plan.ReleaseChange{Action: a, Reasons: rs}
	}
	for _, tc := range []struct {
		name string
		rcs  []*plan.ReleaseChange
		want bool
	}{
		{"no changes", []*plan.ReleaseChange{rc(plan.ActionNoOp)}, false},
		{"drift", []*plan.ReleaseChange{rc(plan.ActionNoOp), rc(plan.ActionUpgrade, drift)}, true},
		{"drift and values", []*plan.ReleaseChange{rc(plan.ActionUpgrade, drift), rc(plan.ActionUpgrade, values)}, false},
		{"install", []*plan.ReleaseChange{rc(plan.ActionInstall, plan.Reason{Kind: plan.ReasonNew})}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isDriftOnly(&plan.Plan{Releases: tc.rcs}); got != tc.want {
				t.Fatalf("isDriftOnly = %v", got)
			}
		})
	}
}
