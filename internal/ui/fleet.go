package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The StackSet page is a pure function of what the user may read: the
// StackSet (its spec and the status the controller writes) and, when
// readable, its generated Stacks, whose conditions say more than the
// one word the StackSet keeps of each (planning, applying).

// Cell phases: what a generated Stack is doing, as one word the page
// colours by (class phase-WORD, attribute data-phase).
const (
	cellPending  = "pending"          // not reconciled yet, or waiting for its step to pin it
	cellPlanning = "planning"         // pulling or planning
	cellApproval = "waiting-approval" // a plan with changes waits for an approval
	cellApplying = "applying"
	cellBaking   = "baking" // Ready on the step's digest while the step bakes
	cellReady    = "ready"
	cellFailed   = "failed"
	cellHalted   = "halted" // a later step than the one that failed or holds: it does not change
	cellPaused   = "paused" // spec.paused (the StackSet's) or spec.suspend (the Stack's)
)

// cellPhases are the phases in the order the legend lists them.
var cellPhases = []string{cellPending, cellPlanning, cellApproval, cellApplying, cellBaking, cellReady, cellFailed, cellHalted, cellPaused}

// fleetCell is one generated Stack in its step.
type fleetCell struct {
	Stack, Element, Cluster string
	Phase                   string
	// State is the Stack's Ready condition in one word (Ready, or its
	// reason), Message what its conditions say.
	State, Message string
	Digest         string
	// Held says why a halted or paused cell does not move.
	Held string
}

// fleetStep is a rollout step (or, without a strategy, every Stack).
type fleetStep struct {
	Name    string
	Spec    *v1alpha1.RolloutStep
	Status  v1alpha1.StageStatus
	Cells   []fleetCell
	Current bool
	// Last is the strategy's last step: it takes every Stack left,
	// whatever its selector or percent.
	Last    bool
	BakePct int
}

// fleetGroup is a group of the fleet plan: the Stacks whose plans are
// identical.
type fleetGroup struct {
	Plan   string
	Stacks []fleetCell
}

type stackSetData struct {
	Set                    *v1alpha1.StackSet
	Ready, Reason, Message string
	Rolling                bool
	// Digest is the newest digest the rollout started (its first step's).
	Digest string
	// Current is the step the rollout is at ("" when every step
	// verified it, or without a strategy).
	Current        string
	Paused, Halted bool
	Steps          []fleetStep
	Plans          []fleetGroup
	// VarNames are the template's variables, by name only: a value may be
	// one the stack declares sensitive (the Stacks' plans mask those).
	VarNames []string
	VarsFrom []string
	// StacksNote says why the Stacks' own conditions are not shown (the
	// user may not list them): the cells say what the StackSet records.
	StacksNote string
	Phases     []string
}

// newStackSetData lays a StackSet out: its steps left to right, each with
// its Stacks as cells, and the fleet plan. stacks are the generated Stacks
// as read (nil when the user may not list them).
func newStackSetData(ss *v1alpha1.StackSet, stacks []v1alpha1.Stack, now time.Time) stackSetData {
	d := stackSetData{Set: ss, Phases: cellPhases}
	if c := meta.FindStatusCondition(ss.Status.Conditions, v1alpha1.CondReady); c != nil {
		d.Ready, d.Reason, d.Message = string(c.Status), c.Reason, c.Message
	}
	d.Rolling = ss.Spec.Strategy != nil && ss.Spec.Strategy.Rolling != nil
	d.Paused = ss.Spec.Paused && d.Rolling
	d.Halted = d.Reason == v1alpha1.ReasonHalted
	for k := range ss.Spec.Template.Spec.Vars {
		d.VarNames = append(d.VarNames, k)
	}
	slices.Sort(d.VarNames)
	for _, v := range ss.Spec.Template.Spec.VarsFrom {
		ref := v.Kind + " " + v.Name
		if v.Namespace != "" {
			ref = v.Kind + " " + v.Namespace + "/" + v.Name
		}
		d.VarsFrom = append(d.VarsFrom, ref)
	}

	live := map[string]*v1alpha1.Stack{}
	for i := range stacks {
		live[stacks[i].Name] = &stacks[i]
	}
	cells := map[string]fleetCell{}
	for _, s := range ss.Status.Stacks {
		c := fleetCell{Stack: s.Name, Element: s.Element, Cluster: s.Cluster, State: s.State, Digest: s.Digest, Phase: phaseOfState(s.State)}
		if st := live[s.Name]; st != nil {
			c.Phase, c.State, c.Message = stackPhase(st)
			if st.Status.Source != nil && st.Status.Source.Digest != "" {
				c.Digest = st.Status.Source.Digest
			}
		}
		cells[s.Name] = c
	}

	if !d.Rolling {
		step := fleetStep{Name: "Stacks"}
		for _, s := range ss.Status.Stacks {
			step.Cells = append(step.Cells, cells[s.Name])
		}
		d.Steps = []fleetStep{step}
	} else {
		d.Steps = rolloutSteps(ss, cells, now)
		if len(d.Steps) > 0 {
			d.Digest = d.Steps[0].Status.Digest
		}
		d.Current = currentStep(d.Steps)
		for i := range d.Steps {
			d.Steps[i].Current = d.Steps[i].Name == d.Current
		}
		hold(&d)
	}
	for i := range d.Steps {
		slices.SortFunc(d.Steps[i].Cells, func(a, b fleetCell) int { return strings.Compare(a.Stack, b.Stack) })
	}

	for _, g := range ss.Status.Plans {
		fg := fleetGroup{Plan: g.Plan}
		for _, n := range g.Stacks {
			c, ok := cells[n]
			if !ok {
				c = fleetCell{Stack: n}
			}
			fg.Stacks = append(fg.Stacks, c)
		}
		d.Plans = append(d.Plans, fg)
	}
	return d
}

// rolloutSteps are the strategy's steps in order, each with its status
// (Waiting before the Pipeline reports it) and the cells it takes; a
// Stack of no step known (a step renamed since the status) gets a column
// of its own at the end.
func rolloutSteps(ss *v1alpha1.StackSet, cells map[string]fleetCell, now time.Time) []fleetStep {
	var out []fleetStep
	known := map[string]bool{}
	for i := range ss.Spec.Strategy.Rolling.Steps {
		spec := &ss.Spec.Strategy.Rolling.Steps[i]
		name := spec.Name
		if name == "" {
			name = fmt.Sprintf("step-%d", i+1) // as the controller names it
		}
		known[name] = true
		step := fleetStep{Name: name, Spec: spec, Status: v1alpha1.StageStatus{Name: name, Phase: v1alpha1.PhaseWaiting},
			Last: i == len(ss.Spec.Strategy.Rolling.Steps)-1}
		for _, st := range ss.Status.Steps {
			if st.Name == name {
				step.Status = st
			}
		}
		step.BakePct = bakePercent(step.Status, spec.Bake, now)
		out = append(out, step)
	}
	var other fleetStep
	for _, s := range ss.Status.Stacks {
		placed := false
		for i := range out {
			if out[i].Name == s.Step {
				out[i].Cells = append(out[i].Cells, cells[s.Name])
				placed = true
			}
		}
		if !placed {
			other.Cells = append(other.Cells, cells[s.Name])
		}
	}
	if len(other.Cells) > 0 {
		other.Name = "no step"
		other.Status.Phase = v1alpha1.PhaseWaiting
		out = append(out, other)
	}
	return out
}

// currentStep is the step the rollout is at: the first that holds the
// newest digest in progress (promoting, baking, awaiting approval,
// failed), else the first waiting one; "" when every step verified it.
func currentStep(steps []fleetStep) string {
	for _, s := range steps {
		switch s.Status.Phase {
		case v1alpha1.PhasePromoting, v1alpha1.PhaseBaking, v1alpha1.PhaseAwaitingApproval, v1alpha1.PhaseFailed:
			return s.Name
		}
	}
	for _, s := range steps {
		if s.Spec != nil && s.Status.Phase != v1alpha1.PhaseVerified && len(s.Cells) > 0 {
			return s.Name
		}
	}
	return ""
}

// hold marks the cells that do not move: under a halt, those of the
// steps after the one that failed or holds; under a pause, those not on
// the newest digest yet. A failing cell stays failed.
func hold(d *stackSetData) {
	switch {
	case d.Halted:
		at := haltingStep(d.Steps)
		after := false
		for i := range d.Steps {
			s := &d.Steps[i]
			if after {
				for j := range s.Cells {
					if c := &s.Cells[j]; c.Phase != cellFailed {
						c.Phase, c.Held = cellHalted, "held: step "+at+" halted the rollout"
					}
				}
			}
			if s.Name == at {
				after = true
			}
		}
	case d.Paused:
		for i := range d.Steps {
			for j := range d.Steps[i].Cells {
				c := &d.Steps[i].Cells[j]
				if d.Digest != "" && c.Digest != d.Digest && c.Phase != cellFailed {
					c.Phase, c.Held = cellPaused, "held: the StackSet is paused"
				}
			}
		}
	}
	for i := range d.Steps {
		s := &d.Steps[i]
		if s.Status.Phase != v1alpha1.PhaseBaking {
			continue
		}
		for j := range s.Cells {
			if c := &s.Cells[j]; c.Phase == cellReady && c.Digest == s.Status.Digest {
				c.Phase = cellBaking
			}
		}
	}
}

// haltingStep is the step that halts a rollout: the first failed one,
// else the first in progress with a failing Stack (it holds while the
// Pipeline retries it), as the controller's Halted message names it.
func haltingStep(steps []fleetStep) string {
	for _, s := range steps {
		if s.Status.Phase == v1alpha1.PhaseFailed {
			return s.Name
		}
	}
	for _, s := range steps {
		if s.Status.Phase != v1alpha1.PhasePromoting && s.Status.Phase != v1alpha1.PhaseBaking {
			continue
		}
		for _, c := range s.Cells {
			if c.Phase == cellFailed {
				return s.Name
			}
		}
	}
	return currentStep(steps)
}

// bakePercent is how far a baking step's bake is (0 otherwise).
func bakePercent(st v1alpha1.StageStatus, bake *metav1.Duration, now time.Time) int {
	if st.Phase != v1alpha1.PhaseBaking || bake == nil || bake.Duration <= 0 || st.Since == nil {
		return 0
	}
	return max(0, min(100, int(100*now.Sub(st.Since.Time)/bake.Duration)))
}

// stackPhase is a Stack's phase from its own conditions, with its Ready
// condition as one word (as the StackSet records it) and what they say.
func stackPhase(st *v1alpha1.Stack) (phase, state, msg string) {
	ready := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.CondReady)
	rec := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.CondReconciling)
	switch {
	case ready == nil || st.Status.ObservedGeneration != st.Generation:
		state = "Pending"
	case ready.Status == metav1.ConditionTrue:
		state = "Ready"
	default:
		state = ready.Reason
	}
	if ready != nil {
		msg = ready.Message
	}
	if st.Spec.Suspend {
		return cellPaused, state, "spec.suspend: the Stack neither plans nor applies"
	}
	if rec != nil && rec.Status == metav1.ConditionTrue && rec.Reason == "Progressing" {
		if (ready != nil && ready.Status == metav1.ConditionUnknown) || strings.HasPrefix(rec.Message, "applying") {
			return cellApplying, state, rec.Message
		}
		return cellPlanning, state, rec.Message
	}
	return phaseOfState(state), state, msg
}

// phaseOfState is the phase of a Stack's Ready condition in one word:
// "Ready", "Pending" or a reason (StackSetStack.State).
func phaseOfState(state string) string {
	switch state {
	case "Ready":
		return cellReady
	case v1alpha1.ReasonApprovalRequired, v1alpha1.ReasonApprovalMismatch:
		return cellApproval
	case v1alpha1.ReasonPlanFailed, v1alpha1.ReasonSourceFailed, v1alpha1.ReasonApplyFailed, v1alpha1.ReasonForbidden,
		v1alpha1.ReasonInvalid, v1alpha1.ReasonVerificationFailed, v1alpha1.ReasonPlanTooLarge:
		return cellFailed
	case v1alpha1.ReasonPlanned, v1alpha1.ReasonStale:
		return cellPlanning
	case "Progressing":
		return cellApplying
	case v1alpha1.ReasonSuspended:
		return cellPaused
	}
	return cellPending // Pending, NoSource, Waiting, Locked
}
