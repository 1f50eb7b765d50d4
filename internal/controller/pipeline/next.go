package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
)

// A Pipeline's reconcile is a loop, as a Stack's is: observe (the
// Pipeline read, what its spec gets wrong), then, until a step ends it,
// next decides from the facts what to do and an act does it, adding what
// it found to the facts. The acts each do one thing: read the stages'
// Stacks, list the repository's tags, advance the stages (the stage
// machine, stepStages, asking the gates), pin Stacks. next is pure: its
// tests drive every arm without a cluster (next_internal_test.go).

// found is what the last act of a reconcile found.
type found int

const (
	// foundNothing: nothing acted yet; decide on what was observed.
	foundNothing found = iota
	// foundStacks: the stages' Stacks were read (facts.read).
	foundStacks
	// foundTags: the tags were listed when due (facts.listErr,
	// facts.latest, facts.checkedAt).
	foundTags
	// foundAdvanced: the stage machine ran (facts.advanced, facts.at).
	foundAdvanced
	// foundPinned: the Stacks to pin were pinned (facts.pinErr,
	// facts.refusals).
	foundPinned
)

// observed is what a reconcile knows before it reads anything but the
// Pipeline.
type observed struct {
	Pipeline *v1alpha1.Pipeline
	// Problems are what the spec gets wrong that the CRD's schema cannot
	// say (validatePipeline, reachProblems).
	Problems []string
	// Forbidden are the StackSets of other namespaces the stages name
	// (stackSetRefusals).
	Forbidden []string
	// Interval is how often the tags are listed (Options.Interval).
	Interval time.Duration
	// PrevRefusal is the refusal the status recorded last (refusalOf).
	PrevRefusal string
}

// stacksRead is what reading the stages' Stacks found (stacksOf).
type stacksRead struct {
	// Stacks are the Stacks read, by pipelineStackKey.
	Stacks map[string]*v1alpha1.Stack
	// StackSets are the stages' StackSets read, by stackSetKey.
	StackSets map[string]*v1alpha1.StackSet
	// Refused are the Stacks the Pipeline's identity may not read (why),
	// by pipelineStackKey.
	Refused map[string]string
	// Stall and Reason: why nothing is promoted (a Stack missing, in an
	// older Pipeline, with a source of its own); "": nothing stalls.
	Stall, Reason string
	// Err: the Stacks could not be read (retried).
	Err error
}

// facts are what a reconcile knows: what it observed, then what each act
// found.
type facts struct {
	observed
	last found
	read stacksRead
	// listErr is why listing the tags failed; latest is the newest
	// matching digest recorded ("": none), checkedAt when it was listed.
	listErr   error
	latest    string
	checkedAt time.Time
	// advanced is the stage machine's step, made at at.
	advanced machineOutput
	at       time.Time
	// views are the stages' Stacks as the stage machine saw them, and
	// then as pinned.
	views map[string]stackView
	// pinErr is why pins failed (retried); refusals are the pins the
	// Pipeline's identity may not make.
	pinErr   error
	refusals []string
}

// stepKind is what the reconcile does next.
type stepKind int

const (
	// Acts after which the loop goes on.
	stepReadStacks stepKind = iota // read the stages' Stacks
	stepListTags                   // list the repository's tags, when due
	stepAdvance                    // run the stage machine over what was read
	stepPin                        // pin the Stacks the stage machine moves

	// Acts that end the reconcile.
	stepSuspended     // spec.suspend: nothing is promoted
	stepInvalid       // the spec is wrong: stall until it changes
	stepReadFailed    // the Stacks could not be read: retry
	stepStacksStall   // a Stack is missing or not the Pipeline's to pin: stall
	stepUnverified    // the newest digest failed spec.verify: not promoted
	stepSourceInvalid // spec.verify's Secret or the spec is wrong: stall
	stepSourceFailed  // the tags could not be listed: retry
	stepNoMatchingTag // no tag matches yet: look again at the interval
	stepRecord        // record the stages, the Stacks and the conditions
)

var stepNames = [...]string{"read stacks", "list tags", "advance", "pin", "suspended", "invalid", "read failed", "stacks stall", "unverified", "source invalid", "source failed", "no matching tag", "record"}

func (k stepKind) String() string { return stepNames[k] }

// step is next's decision: the act, and for one that ends the reconcile,
// the condition's reason and message it records and how long until the
// Pipeline is looked at again.
type step struct {
	Kind    stepKind
	Reason  string
	Message string
	Requeue time.Duration
}

// next decides the reconcile's next step from its facts.
func next(f facts) step {
	p := f.Pipeline
	switch f.last {
	case foundNothing:
		switch {
		case p.Spec.Suspend:
			return step{Kind: stepSuspended, Reason: v1alpha1.ReasonSuspended, Message: "spec.suspend is true: nothing is promoted"}
		case len(f.Problems) > 0:
			return step{Kind: stepInvalid, Reason: ReasonPipelineInvalid, Message: strings.Join(f.Problems, "; "), Requeue: f.Interval}
		case len(f.Forbidden) > 0:
			return step{Kind: stepInvalid, Reason: v1alpha1.ReasonForbidden, Message: strings.Join(f.Forbidden, "; "), Requeue: f.Interval}
		}
		return step{Kind: stepReadStacks}
	case foundStacks:
		switch {
		case f.read.Err != nil:
			return step{Kind: stepReadFailed, Reason: ReasonPromoting, Message: f.read.Err.Error()}
		case f.read.Stall != "":
			return step{Kind: stepStacksStall, Reason: f.read.Reason, Message: f.read.Stall, Requeue: f.Interval}
		}
		return step{Kind: stepListTags}
	case foundTags:
		var ve *artifact.VerificationError
		var ce ConfigError
		switch err := f.listErr; {
		case errors.As(err, &ve):
			// The newest digest is not promoted; what the stages hold
			// already stays as it is.
			return step{Kind: stepUnverified, Reason: v1alpha1.ReasonVerificationFailed, Requeue: f.Interval,
				Message: fmt.Sprintf("spec.verify (keys of v1 Secret %s/%s): %v: not promoted", p.Namespace, p.Spec.Verify.SecretRef.Name, err)}
		case errors.As(err, &ce):
			return step{Kind: stepSourceInvalid, Reason: ReasonPipelineInvalid, Message: err.Error(), Requeue: f.Interval}
		case err != nil:
			return step{Kind: stepSourceFailed, Reason: v1alpha1.ReasonSourceFailed, Message: "spec.source: " + err.Error()}
		case f.latest == "":
			what := fmt.Sprintf("tag %q", p.Spec.Follow.Tag)
			if p.Spec.Follow.Semver != "" {
				what = fmt.Sprintf("tag matching %q", p.Spec.Follow.Semver)
			}
			return step{Kind: stepNoMatchingTag, Reason: ReasonNoMatchingTag, Requeue: f.Interval,
				Message: fmt.Sprintf("%s has no %s yet", p.Spec.Source, what)}
		}
		return step{Kind: stepAdvance}
	case foundAdvanced:
		if len(f.advanced.Pins) > 0 {
			return step{Kind: stepPin}
		}
	}
	// foundAdvanced with nothing to pin, foundPinned: look again at the
	// interval, sooner for a bake or a gate, and when the tags are due.
	requeue := f.Interval
	if d := f.advanced.Requeue; d > 0 {
		requeue = min(requeue, d)
	}
	if due := f.Interval - f.at.Sub(f.checkedAt); due > 0 {
		requeue = min(requeue, due)
	}
	return step{Kind: stepRecord, Requeue: requeue}
}

// maxSteps bounds a reconcile's loop. The longest path: read the Stacks,
// list the tags, advance, pin, record: five steps.
const maxSteps = 6
