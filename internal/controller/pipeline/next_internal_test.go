package pipeline

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
)

// configErr is a ConfigError, as spec.verify's Secret being wrong is.
type configErr struct{ error }

func (configErr) ConfigError() {}

// next's every arm: what a Pipeline's reconcile does after observing,
// and after each act, from the facts alone. Every step kind is some
// row's answer, and each row states the whole step (reason, message,
// requeue), so that changing an arm fails a row.
func TestNext(t *testing.T) {
	const interval = 5 * time.Minute
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pipeline := func(mod func(*v1alpha1.Pipeline)) *v1alpha1.Pipeline {
		p := &v1alpha1.Pipeline{Spec: v1alpha1.PipelineSpec{Source: "oci://r/stacks/app", Follow: v1alpha1.Follow{Semver: ">=1.0.0"}}}
		p.Namespace, p.Name = "delivery", "shop"
		if mod != nil {
			mod(p)
		}
		return p
	}
	verified := pipeline(func(p *v1alpha1.Pipeline) {
		p.Spec.Verify = &v1alpha1.VerifySpec{SecretRef: v1alpha1.LocalObjectReference{Name: "keys"}}
	})
	byTag := pipeline(func(p *v1alpha1.Pipeline) { p.Spec.Follow = v1alpha1.Follow{Tag: "stable"} })
	obs := func(p *v1alpha1.Pipeline, problems ...string) observed {
		return observed{Pipeline: p, Problems: problems, Interval: interval}
	}
	// listed is a reconcile whose tags were listed checkedAgo before the
	// stage machine ran, which asked to be looked at again in requeue
	// and pinned pins.
	listed := func(checkedAgo, requeue time.Duration, pins map[string]string, last found) facts {
		return facts{observed: obs(pipeline(nil)), last: last, latest: "sha256:aa", checkedAt: at.Add(-checkedAgo), at: at,
			advanced: machineOutput{Pins: pins, Requeue: requeue}}
	}
	ref, err := artifact.ParseRef("oci://r/stacks/app@" + d1)
	if err != nil {
		t.Fatal(err)
	}
	verifyErr := &artifact.VerificationError{Ref: ref, Reason: "no signature"}
	seen := map[stepKind]bool{}
	for _, tc := range []struct {
		name string
		f    facts
		want step
	}{
		// Observed.
		{name: "suspended", f: facts{observed: obs(pipeline(func(p *v1alpha1.Pipeline) { p.Spec.Suspend = true }))},
			want: step{Kind: stepSuspended, Reason: v1alpha1.ReasonSuspended, Message: "spec.suspend is true: nothing is promoted"}},
		{name: "suspended wins over problems", f: facts{observed: obs(pipeline(func(p *v1alpha1.Pipeline) { p.Spec.Suspend = true }), "spec.stages: no stage")},
			want: step{Kind: stepSuspended, Reason: v1alpha1.ReasonSuspended, Message: "spec.suspend is true: nothing is promoted"}},
		{name: "problems stall", f: facts{observed: obs(pipeline(nil), "spec.stages: no stage", "spec.follow: give exactly one of semver and tag")},
			want: step{Kind: stepInvalid, Reason: ReasonPipelineInvalid, Message: "spec.stages: no stage; spec.follow: give exactly one of semver and tag", Requeue: interval}},
		{name: "one problem stalls", f: facts{observed: obs(pipeline(nil), "spec.stages: no stage")},
			want: step{Kind: stepInvalid, Reason: ReasonPipelineInvalid, Message: "spec.stages: no stage", Requeue: interval}},
		{name: "valid: read the Stacks", f: facts{observed: obs(pipeline(nil))}, want: step{Kind: stepReadStacks}},

		// After reading the Stacks.
		{name: "Stacks unreadable: retry", f: facts{observed: obs(pipeline(nil)), last: foundStacks, read: stacksRead{Err: errors.New("list the Stacks of namespace delivery: timeout")}},
			want: step{Kind: stepReadFailed, Reason: ReasonPromoting, Message: "list the Stacks of namespace delivery: timeout"}},
		{name: "a Stack missing: stall", f: facts{observed: obs(pipeline(nil)), last: foundStacks, read: stacksRead{Stall: "not found: Stack x: nothing is promoted", Reason: ReasonStackNotFound}},
			want: step{Kind: stepStacksStall, Reason: ReasonStackNotFound, Message: "not found: Stack x: nothing is promoted", Requeue: interval}},
		{name: "a Stack refused does not stall: list the tags", f: facts{observed: obs(pipeline(nil)), last: foundStacks, read: stacksRead{Refused: map[string]string{"x": "may not get"}}},
			want: step{Kind: stepListTags}},

		// After listing the tags.
		{name: "verification failed: not promoted", f: facts{observed: obs(verified), last: foundTags, listErr: verifyErr},
			want: step{Kind: stepUnverified, Reason: v1alpha1.ReasonVerificationFailed, Requeue: interval,
				Message: fmt.Sprintf("spec.verify (keys of v1 Secret delivery/keys): %v: not promoted", verifyErr)}},
		{name: "verification failed, wrapped", f: facts{observed: obs(verified), last: foundTags, listErr: fmt.Errorf("verify: %w", verifyErr)},
			want: step{Kind: stepUnverified, Reason: v1alpha1.ReasonVerificationFailed, Requeue: interval,
				Message: fmt.Sprintf("spec.verify (keys of v1 Secret delivery/keys): verify: %v: not promoted", verifyErr)}},
		{name: "spec.verify's Secret wrong: stall", f: facts{observed: obs(verified), last: foundTags, listErr: configErr{errors.New("v1 Secret delivery/keys: no key")}},
			want: step{Kind: stepSourceInvalid, Reason: ReasonPipelineInvalid, Message: "v1 Secret delivery/keys: no key", Requeue: interval}},
		{name: "tags unlisted: retry", f: facts{observed: obs(pipeline(nil)), last: foundTags, listErr: errors.New("connection refused")},
			want: step{Kind: stepSourceFailed, Reason: v1alpha1.ReasonSourceFailed, Message: "spec.source: connection refused"}},
		{name: "no tag matches", f: facts{observed: obs(pipeline(nil)), last: foundTags},
			want: step{Kind: stepNoMatchingTag, Reason: ReasonNoMatchingTag, Requeue: interval, Message: `oci://r/stacks/app has no tag matching ">=1.0.0" yet`}},
		{name: "the tag followed is missing", f: facts{observed: obs(byTag), last: foundTags},
			want: step{Kind: stepNoMatchingTag, Reason: ReasonNoMatchingTag, Requeue: interval, Message: `oci://r/stacks/app has no tag "stable" yet`}},
		{name: "a digest: advance", f: facts{observed: obs(pipeline(nil)), last: foundTags, latest: "sha256:aa"}, want: step{Kind: stepAdvance}},

		// After the stage machine.
		{name: "pins: pin", f: listed(0, 0, map[string]string{"staging": "sha256:aa"}, foundAdvanced), want: step{Kind: stepPin}},
		{name: "nothing to pin: record, tags due at the interval", f: listed(0, 0, nil, foundAdvanced),
			want: step{Kind: stepRecord, Requeue: interval}},
		{name: "nothing to pin: record, tags due sooner", f: listed(4*time.Minute, 0, nil, foundAdvanced),
			want: step{Kind: stepRecord, Requeue: time.Minute}},
		{name: "nothing to pin: record, a bake's end sooner", f: listed(time.Minute, 30*time.Second, nil, foundAdvanced),
			want: step{Kind: stepRecord, Requeue: 30 * time.Second}},
		{name: "nothing to pin: tags due now", f: listed(interval, 0, nil, foundAdvanced),
			want: step{Kind: stepRecord, Requeue: interval}},
		{name: "nothing to pin: tags overdue (listed by an earlier reconcile)", f: listed(10*time.Minute, 0, nil, foundAdvanced),
			want: step{Kind: stepRecord, Requeue: interval}},

		// After pinning.
		{name: "pinned: record", f: listed(2*time.Minute, 0, map[string]string{"staging": "sha256:aa"}, foundPinned),
			want: step{Kind: stepRecord, Requeue: 3 * time.Minute}},
		{name: "pinned, a gate soon: record", f: listed(2*time.Minute, 5*time.Second, map[string]string{"staging": "sha256:aa"}, foundPinned),
			want: step{Kind: stepRecord, Requeue: 5 * time.Second}},
	} {
		seen[tc.want.Kind] = true
		t.Run(tc.name, func(t *testing.T) {
			if got := next(tc.f); got != tc.want {
				t.Fatalf("next = %+v (%s),\n want %+v (%s)", got, got.Kind, tc.want, tc.want.Kind)
			}
		})
	}
	// An arm no row reaches would be an arm no row can fail.
	for k := range stepKind(len(stepNames)) {
		if !seen[k] {
			t.Errorf("no row's answer is step %q", k)
		}
	}
}

// Every path next can take ends within maxSteps: from each observation,
// the acts' findings chosen by an adversary (any outcome of each read,
// list, advance and pin) never loop.
func TestNextEndsWithinMaxSteps(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	longest := 0
	walkNext(t, at, func(_ facts, _ step, depth int) { longest = max(longest, depth) })
	if longest != 5 {
		t.Errorf("the longest path is %d steps, want 5 (read the Stacks, list the tags, advance, pin, record)", longest)
	}
}

// walkNext follows every path next can take, each act finding each of
// its outcomes, and calls end with the step that ends each path and its
// depth. It fails when a path runs past maxSteps.
func walkNext(t *testing.T, at time.Time, end func(f facts, s step, depth int)) {
	t.Helper()
	// What each act can find.
	findings := map[stepKind][]func(facts) facts{
		stepReadStacks: {
			func(f facts) facts { f.read = stacksRead{Stacks: map[string]*v1alpha1.Stack{}}; return f },
			func(f facts) facts { f.read = stacksRead{Err: errors.New("timeout")}; return f },
			func(f facts) facts { f.read = stacksRead{Stall: "not found", Reason: ReasonStackNotFound}; return f },
			func(f facts) facts { f.read = stacksRead{Refused: map[string]string{"a": "forbidden"}}; return f },
		},
		stepListTags: {
			func(f facts) facts { f.latest, f.checkedAt = "sha256:aa", at; return f },
			func(f facts) facts { f.checkedAt = at; return f },
			func(f facts) facts { f.listErr = &artifact.VerificationError{Reason: "unsigned"}; return f },
			func(f facts) facts { f.listErr = configErr{errors.New("bad Secret")}; return f },
			func(f facts) facts { f.listErr = errors.New("refused"); return f },
		},
		stepAdvance: {
			func(f facts) facts { f.advanced, f.at = machineOutput{Pins: map[string]string{}}, at; return f },
			func(f facts) facts {
				f.advanced, f.at = machineOutput{Pins: map[string]string{"a": "sha256:aa"}}, at
				return f
			},
			func(f facts) facts {
				f.advanced, f.at = machineOutput{Pins: map[string]string{}, Requeue: time.Second}, at
				return f
			},
		},
		stepPin: {
			func(f facts) facts { return f },
			func(f facts) facts { f.pinErr = errors.New("conflict"); return f },
			func(f facts) facts { f.refusals = []string{"may not patch"}; return f },
		},
	}
	foundBy := map[stepKind]found{stepReadStacks: foundStacks, stepListTags: foundTags, stepAdvance: foundAdvanced, stepPin: foundPinned}
	var walk func(f facts, depth int)
	walk = func(f facts, depth int) {
		if depth > maxSteps {
			t.Fatalf("no end after %d steps: %+v", maxSteps, f)
		}
		s := next(f)
		outs, goesOn := findings[s.Kind]
		if !goesOn {
			end(f, s, depth)
			return
		}
		for _, o := range outs {
			g := o(f)
			g.last = foundBy[s.Kind]
			walk(g, depth+1)
		}
	}
	for _, p := range []*v1alpha1.Pipeline{
		{Spec: v1alpha1.PipelineSpec{Source: "oci://r/a", Follow: v1alpha1.Follow{Tag: "stable"}, Verify: &v1alpha1.VerifySpec{}}},
		{Spec: v1alpha1.PipelineSpec{Source: "oci://r/a", Follow: v1alpha1.Follow{Tag: "stable"}, Suspend: true}},
	} {
		for _, problems := range [][]string{nil, {"spec.stages: no stage"}} {
			walk(facts{observed: observed{Pipeline: p, Problems: problems, Interval: time.Minute}}, 1)
		}
	}
}
