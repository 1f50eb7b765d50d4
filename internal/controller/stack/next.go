package stack

import (
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/plan"
)

// A reconcile is a loop: observe (the Stack opened: its source, inputs and
// stack), then, until a step ends it, next decides from the facts what to
// do and an act does it, adding what it found to the facts. next is pure:
// its tests drive every arm without a cluster (next_internal_test.go).

// found is what the last act of a reconcile found.
type found int

const (
	// foundNothing: nothing acted yet; decide on what was observed.
	foundNothing found = iota
	// foundPlan: a plan was computed and stored (facts.fresh).
	foundPlan
	// foundCurrent: the pending plan's observations still hold.
	foundCurrent
	// foundMoved: what the pending plan observed moved (a recheck).
	foundMoved
	// foundStale: applying the saved plan found its observations moved.
	foundStale
	// foundGone: the saved plan to apply is gone from the plan store.
	foundGone
)

// facts are what a reconcile knows: what it observed, then what each act
// found.
type facts struct {
	observed
	last found
	// replans counts the plans computed because the saved plan to apply
	// was stale or gone: one is planned again once, not forever.
	replans int
	// fresh is the plan this reconcile computed (nil: none yet).
	fresh *freshPlan
	// stale says why the saved plan was stale (foundStale); goneDigest
	// is the saved plan found gone (foundGone).
	stale, goneDigest string
}

// freshPlan is a plan a reconcile computed and stored.
type freshPlan struct {
	Status *v1alpha1.PlanStatus
	// Foreign: the plan would change releases other stacks own.
	Foreign bool
	// plan is the plan itself, and foreign its refusal (Foreign).
	plan    *plan.Plan
	foreign error
}

// stepKind is what the reconcile does next.
type stepKind int

const (
	// Acts after which the loop goes on.
	stepPlan    stepKind = iota // compute and store a new plan
	stepApply                   // apply the saved plan step.Plan
	stepRecheck                 // check whether step.Plan's observations moved

	// Acts that end the reconcile.
	stepWait         // record step.Plan as waiting for approval (or drift)
	stepUpToDate     // record that nothing is to apply
	stepRefused      // record the fresh plan refused: it changes others' releases
	stepPolicyDenied // record the fresh plan denied by policies
	stepRetryStale   // planned again once already: retry soon
	stepSavedGone    // the saved plan is gone again after planning again
	stepHold         // keep the refused plan until a plan is due
	stepIdle         // nothing to do until a plan is due
)

var stepNames = [...]string{"plan", "apply", "recheck", "wait", "up to date", "refused", "policy denied", "retry stale", "saved plan gone", "hold refused", "idle"}

func (k stepKind) String() string { return stepNames[k] }

// step is next's decision: the act, the plan it is about (apply,
// recheck, wait, policy denied), how long until the Stack is looked at
// again (wait, hold, idle), and whether a plan is computed because the
// saved one was stale or gone (counted in facts.replans).
type step struct {
	Kind    stepKind
	Plan    *v1alpha1.PlanStatus
	Requeue time.Duration
	Replan  bool
}

// next decides the reconcile's next step from its facts.
func next(f facts) step {
	st := f.Stack
	switch f.last {
	case foundNothing:
		p := st.Status.Plan
		a := decide(f.observed)
		switch a.Verdict {
		case holdRefused:
			return step{Kind: stepHold, Requeue: a.Requeue}
		case applyPending:
			return step{Kind: stepApply, Plan: p}
		case awaitApproval:
			return step{Kind: stepWait, Plan: p, Requeue: a.Requeue}
		case recheckPending:
			return step{Kind: stepRecheck, Plan: p}
		case idle:
			return step{Kind: stepIdle, Requeue: a.Requeue}
		}
		return step{Kind: stepPlan}
	case foundCurrent:
		// Still the plan to approve: it waits on, renewed.
		return step{Kind: stepWait, Plan: st.Status.Plan, Requeue: f.Interval}
	case foundMoved:
		return step{Kind: stepPlan}
	case foundStale:
		if f.replans > 0 {
			return step{Kind: stepRetryStale}
		}
		return step{Kind: stepPlan, Replan: true}
	case foundGone:
		if f.replans > 0 {
			return step{Kind: stepSavedGone}
		}
		return step{Kind: stepPlan, Replan: true}
	}
	// foundPlan
	ps := f.fresh.Status
	switch {
	case f.fresh.Foreign:
		return step{Kind: stepRefused, Plan: ps}
	case !ps.HasChanges:
		return step{Kind: stepUpToDate, Plan: ps}
	case len(deniedStill(st, ps)) > 0:
		return step{Kind: stepPolicyDenied, Plan: ps, Requeue: f.Interval}
	case mayApply(st, ps):
		return step{Kind: stepApply, Plan: ps}
	}
	return step{Kind: stepWait, Plan: ps, Requeue: f.Interval}
}

// maxSteps bounds a reconcile's loop. The longest path: recheck, plan,
// apply (stale), plan, apply (stale), retry: six steps.
const maxSteps = 8
