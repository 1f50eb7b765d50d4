package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// reconcile observes the Pipeline, then loops: next decides from what is
// known, an act does it, until a step ends the reconcile (next.go).
func (r *Reconciler) reconcile(ctx context.Context, p *v1alpha1.Pipeline) pipelineOutcome {
	f := r.observe(p)
	for range maxSteps {
		s := next(f)
		switch s.Kind {
		case stepReadStacks:
			f.read = r.stacksOf(ctx, p)
			f.last = foundStacks
		case stepListTags:
			r.listTags(ctx, &f)
		case stepAdvance:
			r.advance(ctx, &f)
		case stepPin:
			r.pinStacks(ctx, &f)
		default:
			return r.finish(s, f)
		}
	}
	// next ends every path within maxSteps (TestNextEndsWithinMaxSteps).
	err := fmt.Errorf("the reconcile did not settle in %d steps", maxSteps)
	pipelineRetrying(p, ReasonPromoting, err.Error())
	return pipelineOutcome{err: err}
}

// observe is what the Pipeline itself says: its spec's problems, its
// interval and the refusal it recorded last. It reads nothing.
func (r *Reconciler) observe(p *v1alpha1.Pipeline) facts {
	o := observed{Pipeline: p, Interval: r.opts.Interval(p), PrevRefusal: refusalOf(p)}
	if !p.Spec.Suspend {
		o.Problems = append(validatePipeline(p.Namespace, &p.Spec), r.reachProblems(p)...)
		o.Forbidden = stackSetRefusals(p)
	}
	return facts{observed: o}
}

// listTags lists the repository's tags when they are due (poll) and
// notes the newest matching digest recorded.
func (r *Reconciler) listTags(ctx context.Context, f *facts) {
	p := f.Pipeline
	f.listErr = r.poll(ctx, p)
	if l := p.Status.Latest; f.listErr == nil && l != nil {
		f.latest = l.Digest
		if l.CheckedAt != nil {
			f.checkedAt = l.CheckedAt.Time
		}
	}
	f.last = foundTags
}

// advance runs the stage machine over the Stacks read and the gates'
// verdicts (a gate runs in the background; its verdict is taken once it
// ended), and records the stages' phases.
func (r *Reconciler) advance(ctx context.Context, f *facts) {
	p, stacks := f.Pipeline, f.read.Stacks
	f.views = map[string]stackView{}
	for name, st := range stacks {
		f.views[name] = viewStack(st)
	}
	for key, ss := range f.read.StackSets {
		f.views[key] = viewStackSet(ss)
	}
	f.at = time.Now()
	key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	asked := map[gateKey]bool{}
	// The runs' own copies of the Pipeline and its Stacks: this
	// reconcile changes them.
	gp, gstacks := p.DeepCopy(), map[string]*v1alpha1.Stack{}
	for name, st := range stacks {
		gstacks[name] = st.DeepCopy()
	}
	f.advanced = stepStages(machineInput{
		Namespace: p.Namespace, Name: p.Name, Now: f.at, Latest: f.latest, Spec: &p.Spec, Stages: p.Status.Stages, Stacks: f.views,
		Gate: func(i, j int, digest string, since time.Time) gateVerdict {
			k := gateKey{pipeline: key, generation: p.Generation, stage: p.Spec.Stages[i].Name, gate: j, digest: digest}
			asked[k] = true
			if r.gates == nil {
				return r.stageGate(ctx, p, i, j, stacks)
			}
			return r.gates.verdict(k, since, p, func(ctx context.Context) gateVerdict {
				return r.stageGate(ctx, gp, i, j, gstacks)
			})
		},
	})
	if r.gates != nil {
		r.gates.prune(key, asked)
	}
	p.Status.Stages = f.advanced.Stages
	f.last = foundAdvanced
}

// pinStacks pins the Stacks the stage machine moves, in the spec's order.
// A Stack the Pipeline's identity may not read or patch is left as it is,
// and its stage says why.
func (r *Reconciler) pinStacks(ctx context.Context, f *facts) {
	p := f.Pipeline
	for i, stage := range p.Spec.Stages {
		for k, ref := range stage.Stacks {
			name := pipelineStackKey(p.Namespace, ref)
			d, ok := f.advanced.Pins[name]
			if !ok {
				continue
			}
			refusal := f.read.Refused[name]
			var err error
			if refusal == "" {
				refusal, err = r.pin(ctx, p, f.read.Stacks[name], d)
			}
			if refusal != "" {
				why := fmt.Sprintf("Stack %s (spec.stages[%d].stacks[%d]): %s: not pinned to %s", ref.In(p.Namespace), i, k, refusal, d)
				f.refusals = append(f.refusals, why)
				// Once: a failed stage's message (a rollback's pins) is
				// carried from one reconcile to the next.
				if s := &p.Status.Stages[i]; !strings.Contains(s.Message, why) {
					s.Message += "; " + why
				}
				continue
			}
			if err != nil {
				f.pinErr = errors.Join(f.pinErr, err)
				continue
			}
			f.views[name] = stackView{Pinned: d}
		}
		if ref := stage.StackSet; ref != nil {
			r.pinStageStackSet(ctx, f, i, ref.Name)
		}
	}
	f.last = foundPinned
}

// pinStageStackSet pins stage i's StackSet when the stage machine moves
// it; a refusal is said as a Stack's is.
func (r *Reconciler) pinStageStackSet(ctx context.Context, f *facts, i int, name string) {
	p, key := f.Pipeline, stackSetKey(name)
	d, ok := f.advanced.Pins[key]
	if !ok {
		return
	}
	refusal := f.read.Refused[key]
	var err error
	if refusal == "" {
		refusal, err = r.pinStackSet(ctx, p, f.read.StackSets[key], d)
	}
	if refusal != "" {
		why := fmt.Sprintf("StackSet %s (spec.stages[%d].stackSet): %s: not pinned to %s", name, i, refusal, d)
		f.refusals = append(f.refusals, why)
		if s := &p.Status.Stages[i]; !strings.Contains(s.Message, why) {
			s.Message += "; " + why
		}
		return
	}
	if err != nil {
		f.pinErr = errors.Join(f.pinErr, err)
		return
	}
	f.views[key] = stackView{Pinned: d}
}

// finish records the step that ends the reconcile.
func (r *Reconciler) finish(s step, f facts) pipelineOutcome {
	p := f.Pipeline
	switch s.Kind {
	case stepSuspended, stepNoMatchingTag:
		pipelineReady(p, metav1.ConditionFalse, s.Reason, s.Message)
		return pipelineOutcome{requeue: s.Requeue}
	case stepInvalid, stepStacksStall, stepSourceInvalid:
		r.stall(p, s.Reason, s.Message)
		return pipelineOutcome{requeue: s.Requeue}
	case stepReadFailed:
		pipelineRetrying(p, s.Reason, s.Message)
		return pipelineOutcome{err: f.read.Err}
	case stepUnverified:
		pipelineReady(p, metav1.ConditionFalse, s.Reason, s.Message)
		r.event(p, corev1.EventTypeWarning, s.Reason, "Verify", s.Message)
		return pipelineOutcome{requeue: s.Requeue}
	case stepSourceFailed:
		pipelineRetrying(p, s.Reason, s.Message)
		r.event(p, corev1.EventTypeWarning, s.Reason, "ListTags", s.Message)
		return pipelineOutcome{err: errors.New(s.Message)}
	}
	return r.record(s, f)
}

// record writes what the stage machine decided and the pins did: each
// Stack's digest and readiness, the stages' events, the conditions.
func (r *Reconciler) record(s step, f facts) pipelineOutcome {
	p, out := f.Pipeline, f.advanced
	p.Status.Stacks = stacksStatus(p, f.views, out.Pins, f.at)
	for _, n := range out.Notices {
		typ := corev1.EventTypeNormal
		if n.Event == v1alpha1.EventStageFailed {
			typ = corev1.EventTypeWarning
		}
		if !pipelineNotified(p, n) {
			r.event(p, typ, string(n.Event), "Promote", fmt.Sprintf("stage %s: %s", n.Stage, n.Message))
		}
	}
	setPipelineConditions(p)
	if f.pinErr != nil {
		pipelineRetrying(p, ReasonPromoting, f.pinErr.Error())
	}
	if len(f.refusals) > 0 {
		r.refuse(p, f.PrevRefusal, strings.Join(f.refusals, "; "))
	}
	return pipelineOutcome{requeue: s.Requeue, err: f.pinErr, notices: out.Notices}
}
