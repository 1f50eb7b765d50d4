package stack

import (
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
)

// The Stack's decision is a pure function from what a reconcile observed
// (the Stack's spec and status, the hash of the inputs it read, the
// interval, the time) to what it should do next; the reconciler observes
// and acts, the tests drive decide alone (as stepStages for a Pipeline).

// observed is what the Stack's decision reads.
type observed struct {
	Stack *v1alpha1.Stack
	// Inputs is the hash of the inputs read by this reconcile (source
	// digest, variables, kubeconfigs).
	Inputs string
	// Interval is how often the Stack is planned (clamped already).
	Interval time.Duration
	Now      time.Time
}

// verdict is what the reconcile does with the Stack's current plan.
type verdict int

const (
	// planAgain computes a new plan (then applies it or waits).
	planAgain verdict = iota
	// holdRefused keeps a plan refused for releases the Stack may not
	// change until a plan is due.
	holdRefused
	// applyPending applies the pending plan: it may be applied now.
	applyPending
	// awaitApproval keeps the pending plan waiting for approval (or for
	// the policies denying it to be overridden): no plan is due.
	awaitApproval
	// recheckPending checks whether what the pending plan observed moved:
	// planned again if it did, else it waits on, renewed.
	recheckPending
	// idle: nothing changed and no plan is due (a failed apply is tried
	// again with the next plan).
	idle
)

var verdictNames = [...]string{"plan", "hold refused", "apply pending", "await approval", "recheck pending", "idle"}

func (v verdict) String() string { return verdictNames[v] }

// action is the decision: the verdict, and for holdRefused,
// awaitApproval and idle how long until a plan is due (the requeue).
type action struct {
	Verdict verdict
	Requeue time.Duration
}

// decide is the Stack's decision. A plan is pending when it was computed
// from the inputs read now, changes something and is not applied yet;
// due when the inputs moved, or the plan is older than the interval.
func decide(o observed) action {
	st := o.Stack
	p := st.Status.Plan
	sameInputs := p != nil && p.Inputs == o.Inputs
	due := !sameInputs || p.CreatedAt == nil || o.Now.Sub(p.CreatedAt.Time) >= o.Interval
	pending := sameInputs && p.HasChanges && st.Status.LastAppliedPlan != p.Digest
	// A plan refused for releases this stack may not change is never
	// applied: it is planned again when due (another stack may have let
	// the releases go, or the stack say adopt = true).
	refused := pending && st.Status.LastFailedPlan == p.Digest && isStalled(st, v1alpha1.ReasonInvalid)
	switch {
	case refused && !due:
		return action{Verdict: holdRefused, Requeue: o.Interval - o.Now.Sub(p.CreatedAt.Time)}
	case refused:
		return action{Verdict: planAgain}
	case pending && mayApply(st, p):
		return action{Verdict: applyPending}
	case pending && !due:
		return action{Verdict: awaitApproval, Requeue: o.Interval - o.Now.Sub(p.CreatedAt.Time)}
	case pending:
		return action{Verdict: recheckPending}
	case sameInputs && !due:
		return action{Verdict: idle, Requeue: o.Interval - o.Now.Sub(p.CreatedAt.Time)}
	}
	return action{Verdict: planAgain}
}
