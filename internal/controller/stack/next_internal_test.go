package stack

import (
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// next's every arm: what the reconcile does after observing, and after
// each act, from the facts alone.
func TestNext(t *testing.T) {
	const (
		d        = "sha256:aa"
		fresh    = "sha256:bb"
		inputs   = "inputs-1"
		interval = 10 * time.Minute
	)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(age time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-age)} }
	// stack is a Stack whose pending plan d, of inputs, changes something
	// and was made age ago.
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
	obs := func(st *v1alpha1.Stack) observed {
		return observed{Stack: st, Inputs: inputs, Interval: interval, Now: now}
	}
	planned := func(mod func(*freshPlan)) *freshPlan {
		p := &freshPlan{Status: &v1alpha1.PlanStatus{Digest: fresh, Inputs: inputs, HasChanges: true}}
		if mod != nil {
			mod(p)
		}
		return p
	}
	auto := stack(v1alpha1.ApprovalAuto, time.Minute, nil)
	manual := stack(v1alpha1.ApprovalManual, time.Minute, nil)
	for _, tc := range []struct {
		name string
		f    facts
		want step
	}{
		// Observed: decide's verdicts (TestDecide covers how they are reached).
		{name: "refused, not due: hold",
			f: facts{observed: obs(stack(v1alpha1.ApprovalAuto, 4*time.Minute, func(st *v1alpha1.Stack) {
				st.Status.LastFailedPlan = d
				st.Status.Conditions = []metav1.Condition{{Type: v1alpha1.CondStalled, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonInvalid}}
			}))},
			want: step{Kind: stepHold, Requeue: 6 * time.Minute}},
		{name: "pending and approved: apply it", f: facts{observed: obs(auto)}, want: step{Kind: stepApply, Plan: auto.Status.Plan}},
		{name: "pending, unapproved, not due: wait", f: facts{observed: obs(manual)},
			want: step{Kind: stepWait, Plan: manual.Status.Plan, Requeue: 9 * time.Minute}},
		{name: "pending, unapproved, due: recheck", f: facts{observed: obs(stack(v1alpha1.ApprovalManual, interval, nil))},
			want: step{Kind: stepRecheck}},
		{name: "applied, not due: idle", f: facts{observed: obs(stack(v1alpha1.ApprovalAuto, time.Minute, func(st *v1alpha1.Stack) {
			st.Status.LastAppliedPlan = d
		}))}, want: step{Kind: stepIdle, Requeue: 9 * time.Minute}},
		{name: "inputs moved: plan", f: facts{observed: observed{Stack: auto, Inputs: "inputs-2", Interval: interval, Now: now}},
			want: step{Kind: stepPlan}},

		// After a recheck.
		{name: "recheck: still current, waits on", f: facts{observed: obs(manual), last: foundCurrent},
			want: step{Kind: stepWait, Plan: manual.Status.Plan, Requeue: interval}},
		{name: "recheck: moved, plan again", f: facts{observed: obs(manual), last: foundMoved}, want: step{Kind: stepPlan}},

		// After an apply of the saved plan.
		{name: "stale: plan again once", f: facts{observed: obs(auto), last: foundStale}, want: step{Kind: stepPlan, Replan: true}},
		{name: "stale after planning again: retry soon", f: facts{observed: obs(auto), last: foundStale, replans: 1},
			want: step{Kind: stepRetryStale}},
		{name: "gone: plan again once", f: facts{observed: obs(auto), last: foundGone}, want: step{Kind: stepPlan, Replan: true}},
		{name: "gone after planning again: fails", f: facts{observed: obs(auto), last: foundGone, replans: 1},
			want: step{Kind: stepSavedGone}},

		// After a plan.
		{name: "plan: foreign releases, refused", f: facts{observed: obs(auto), last: foundPlan, fresh: planned(func(p *freshPlan) { p.Foreign = true })},
			want: step{Kind: stepRefused}},
		{name: "plan: no changes, up to date", f: facts{observed: obs(auto), last: foundPlan, fresh: planned(func(p *freshPlan) { p.Status.HasChanges = false })},
			want: step{Kind: stepUpToDate}},
		{name: "plan: denied by policies", f: facts{observed: obs(auto), last: foundPlan, fresh: planned(func(p *freshPlan) { p.Status.DeniedBy = []string{"no_latest"} })},
			want: step{Kind: stepPolicyDenied, Requeue: interval}},
		{name: "plan: auto, applied at once", f: facts{observed: obs(auto), last: foundPlan, fresh: planned(nil)},
			want: step{Kind: stepApply}},
		{name: "plan: manual, waits for approval", f: facts{observed: obs(manual), last: foundPlan, fresh: planned(nil)},
			want: step{Kind: stepWait, Requeue: interval}},
		{name: "plan: manual, approved already (by digest), applied", f: facts{observed: obs(stack(v1alpha1.ApprovalManual, time.Minute, func(st *v1alpha1.Stack) {
			st.Spec.ApprovedPlan = fresh
		})), last: foundPlan, fresh: planned(nil)}, want: step{Kind: stepApply}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := next(tc.f)
			// The plan a step is about: the fresh one after a plan, the
			// Stack's pending one otherwise.
			want := tc.want
			switch {
			case want.Kind == stepHold || want.Kind == stepIdle || want.Kind == stepPlan || want.Kind == stepRetryStale || want.Kind == stepSavedGone:
			case tc.f.last == foundPlan:
				want.Plan = tc.f.fresh.Status
			default:
				want.Plan = tc.f.Stack.Status.Plan
			}
			if got != want {
				t.Fatalf("next = %+v (%s), want %+v (%s)", got, got.Kind, want, want.Kind)
			}
		})
	}
}

// Every path next can take ends within maxSteps: from each verdict, the
// acts' findings chosen by an adversary (a plan that is applied and
// found stale every time, a recheck that moves) never loop.
func TestNextEndsWithinMaxSteps(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// Each act can find any of these.
	findings := map[stepKind][]found{
		stepPlan:    {foundPlan},
		stepApply:   {foundStale, foundGone},
		stepRecheck: {foundCurrent, foundMoved},
	}
	plans := []*freshPlan{
		{Status: &v1alpha1.PlanStatus{Digest: "sha256:bb", HasChanges: true}},
		{Status: &v1alpha1.PlanStatus{Digest: "sha256:bb"}},
		{Status: &v1alpha1.PlanStatus{Digest: "sha256:bb", HasChanges: true}, Foreign: true},
	}
	var walk func(f facts, depth int)
	longest := 0
	walk = func(f facts, depth int) {
		if depth > maxSteps {
			t.Fatalf("no end after %d steps: %+v", maxSteps, f)
		}
		s := next(f)
		if s.Replan {
			f.replans++
		}
		outs, goesOn := findings[s.Kind]
		if !goesOn {
			longest = max(longest, depth)
			return
		}
		for _, o := range outs {
			g := f
			g.last = o
			if o == foundPlan {
				for _, p := range plans {
					g.fresh = p
					walk(g, depth+1)
				}
				continue
			}
			walk(g, depth+1)
		}
	}
	specs := []v1alpha1.StackSpec{
		{Approval: v1alpha1.ApprovalAuto},
		{Approval: v1alpha1.ApprovalManual},
		// The plan a recheck computes again is approved already.
		{Approval: v1alpha1.ApprovalManual, ApprovedPlan: "sha256:bb"},
	}
	for _, spec := range specs {
		for _, age := range []time.Duration{time.Minute, time.Hour} {
			for _, inputs := range []string{"inputs-1", "inputs-2"} {
				st := &v1alpha1.Stack{
					Spec:   spec,
					Status: v1alpha1.StackStatus{Plan: &v1alpha1.PlanStatus{Digest: "sha256:aa", Inputs: "inputs-1", HasChanges: true, CreatedAt: &metav1.Time{Time: now.Add(-age)}}},
				}
				walk(facts{observed: observed{Stack: st, Inputs: inputs, Interval: 10 * time.Minute, Now: now}}, 1)
			}
		}
	}
	if longest != 6 {
		t.Errorf("the longest path is %d steps, want 6 (recheck, plan, apply, plan, apply, retry)", longest)
	}
}
