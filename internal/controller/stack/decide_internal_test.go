package stack

import (
	"cmp"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/plan"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Every arm of the Stack's decision, and the order between them: a refused
// plan is never applied, whatever its approval; a pending plan that may be
// applied is applied whether due or not; one awaiting approval is checked
// again once due.
func TestDecide(t *testing.T) {
	const (
		d        = "sha256:aa"
		inputs   = "inputs-1"
		interval = 10 * time.Minute
	)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(age time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-age)} }
	stalledInvalid := []metav1.Condition{{Type: v1alpha1.CondStalled, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonInvalid}}
	stalledOther := []metav1.Condition{{Type: v1alpha1.CondStalled, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonPlanFailed}}
	// stack is a Stack whose current plan, of inputs, changes something,
	// was made age ago and is not applied.
	stack := func(approval v1alpha1.Approval, age time.Duration, mod func(*v1alpha1.Stack)) *v1alpha1.Stack {
		st := &v1alpha1.Stack{
			Spec:   v1alpha1.StackSpec{Approval: approval},
			Status: v1alpha1.StackStatus{Plan: &v1alpha1.PlanStatus{Digest: d, Inputs: inputs, HasChanges: true, CreatedAt: at(age)}},
		}
		if mod != nil {
			mod(st)
		}
		return st
	}
	refused := func(st *v1alpha1.Stack) {
		st.Status.LastFailedPlan = d
		st.Status.Conditions = stalledInvalid
	}
	for _, tc := range []struct {
		name   string
		st     *v1alpha1.Stack
		inputs string
		want   action
	}{
		{name: "refused, not due", st: stack(v1alpha1.ApprovalAuto, 4*time.Minute, refused),
			want: action{Verdict: holdRefused, Requeue: 6 * time.Minute}},
		{name: "refused, manual and approved, not due", st: stack(v1alpha1.ApprovalManual, 4*time.Minute, func(st *v1alpha1.Stack) {
			refused(st)
			st.Spec.ApprovedPlan = d
		}), want: action{Verdict: holdRefused, Requeue: 6 * time.Minute}},
		{name: "refused, due", st: stack(v1alpha1.ApprovalAuto, interval, refused),
			want: action{Verdict: planAgain}},
		{name: "failed, stalled for another reason: not refused", st: stack(v1alpha1.ApprovalAuto, time.Minute, func(st *v1alpha1.Stack) {
			st.Status.LastFailedPlan = d
			st.Status.Conditions = stalledOther
		}), want: action{Verdict: applyPending}},
		{name: "stalled invalid on another plan: not refused", st: stack(v1alpha1.ApprovalAuto, time.Minute, func(st *v1alpha1.Stack) {
			st.Status.LastFailedPlan = "sha256:bb"
			st.Status.Conditions = stalledInvalid
		}), want: action{Verdict: applyPending}},
		{name: "pending, may apply (auto)", st: stack(v1alpha1.ApprovalAuto, time.Minute, nil),
			want: action{Verdict: applyPending}},
		{name: "pending, may apply, due", st: stack(v1alpha1.ApprovalAuto, 2*interval, nil),
			want: action{Verdict: applyPending}},
		{name: "pending, manual and approved", st: stack(v1alpha1.ApprovalManual, time.Minute, func(st *v1alpha1.Stack) { st.Spec.ApprovedPlan = d }),
			want: action{Verdict: applyPending}},
		{name: "pending, denied by a policy, not due", st: stack(v1alpha1.ApprovalAuto, time.Minute, func(st *v1alpha1.Stack) {
			st.Status.Plan.DeniedBy = []string{"no-deletes"}
		}), want: action{Verdict: awaitApproval, Requeue: 9 * time.Minute}},
		{name: "pending, not due", st: stack(v1alpha1.ApprovalManual, 3*time.Minute, nil),
			want: action{Verdict: awaitApproval, Requeue: 7 * time.Minute}},
		{name: "pending, due", st: stack(v1alpha1.ApprovalManual, interval, nil),
			want: action{Verdict: recheckPending}},
		{name: "pending, no creation time: due", st: stack(v1alpha1.ApprovalManual, 0, func(st *v1alpha1.Stack) { st.Status.Plan.CreatedAt = nil }),
			want: action{Verdict: recheckPending}},
		{name: "same inputs, no changes, not due", st: stack(v1alpha1.ApprovalAuto, 8*time.Minute, func(st *v1alpha1.Stack) { st.Status.Plan.HasChanges = false }),
			want: action{Verdict: idle, Requeue: 2 * time.Minute}},
		{name: "same inputs, applied, not due", st: stack(v1alpha1.ApprovalManual, 8*time.Minute, func(st *v1alpha1.Stack) { st.Status.LastAppliedPlan = d }),
			want: action{Verdict: idle, Requeue: 2 * time.Minute}},
		{name: "same inputs, no changes, due", st: stack(v1alpha1.ApprovalAuto, interval, func(st *v1alpha1.Stack) { st.Status.Plan.HasChanges = false }),
			want: action{Verdict: planAgain}},
		{name: "inputs moved", st: stack(v1alpha1.ApprovalAuto, time.Minute, nil), inputs: "inputs-2",
			want: action{Verdict: planAgain}},
		{name: "inputs moved, refused plan", st: stack(v1alpha1.ApprovalAuto, time.Minute, refused), inputs: "inputs-2",
			want: action{Verdict: planAgain}},
		{name: "no plan yet", st: &v1alpha1.Stack{},
			want: action{Verdict: planAgain}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := cmp.Or(tc.inputs, inputs)
			if got := decide(observed{Stack: tc.st, Inputs: in, Interval: interval, Now: now}); got != tc.want {
				t.Fatalf("decide = %v (requeue %s), want %v (requeue %s)", got.Verdict, got.Requeue, tc.want.Verdict, tc.want.Requeue)
			}
		})
	}
}
