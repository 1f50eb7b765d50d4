package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func fleetStages(mod func(prod *v1alpha1.Stage)) *v1alpha1.PipelineSpec {
	spec := &v1alpha1.PipelineSpec{
		Source: "oci://r/stacks/app",
		Follow: v1alpha1.Follow{Semver: ">=1.0.0"},
		Stages: []v1alpha1.Stage{
			{Name: "staging", Stacks: v1alpha1.StackRefs("staging")},
			{Name: "production", StackSet: &v1alpha1.PipelineStackRef{Name: "fleet"}},
		},
	}
	if mod != nil {
		mod(&spec.Stages[1])
	}
	return spec
}

// A stage's StackSet is pinned once staging verified the digest, and the
// stage is Verified only once the StackSet is Ready on it.
func TestStageMachinePinsAStackSet(t *testing.T) {
	w := newWorld(t, fleetStages(nil))
	w.settle(d1, 8)
	if got := w.phases(); got != "staging:Verified production:Verified" {
		t.Fatalf("phases %s", got)
	}
	if want := []string{"staging=sha256:1", "StackSet fleet=sha256:1"}; !slices.Equal(w.pinLog, want) {
		t.Fatalf("pins %v, want %v", w.pinLog, want)
	}
	if w.pinStep["StackSet fleet"] <= w.pinStep["staging"] {
		t.Fatalf("the StackSet was pinned at step %d, staging at %d", w.pinStep["StackSet fleet"], w.pinStep["staging"])
	}
}

// While the StackSet rolls out, the stage says what it waits for.
func TestStageMachineWaitsForTheStackSet(t *testing.T) {
	w := newWorld(t, fleetStages(nil))
	w.settle(d1, 3)
	w.stacks["StackSet fleet"] = stackView{Pinned: d1, NotReady: "rolling out: 1 of 3 Stacks Ready"}
	out := stepStages(machineInput{Namespace: "delivery", Name: "shop", Now: w.now, Latest: d1, Spec: w.spec, Stages: w.stages, Stacks: w.stacks})
	s := out.Stages[1]
	if s.Phase != v1alpha1.PhasePromoting || !strings.Contains(s.Message, "0 of 1 StackSet Ready on "+d1) || !strings.Contains(s.Message, "StackSet fleet: rolling out: 1 of 3 Stacks Ready") {
		t.Fatalf("production: %s %q", s.Phase, s.Message)
	}
}

// A halted rollout fails the stage naming the StackSet; with rollback the
// StackSet is pinned back to the digest the stage verified.
func TestStageMachineStackSetHaltFailsAndRollsBack(t *testing.T) {
	w := newWorld(t, fleetStages(func(s *v1alpha1.Stage) { s.Rollback = true }))
	w.settle(d1, 8)
	w.fail["StackSet fleet"] = d2
	w.settle(d2, 8)
	s := w.stages[1]
	if s.Phase != v1alpha1.PhaseFailed || s.Digest != d2 || !strings.Contains(s.Message, "StackSet fleet failed on "+d2) || !strings.Contains(s.Message, "rolled back to "+d1) {
		t.Fatalf("production: %s on %s: %q", s.Phase, s.Digest, s.Message)
	}
	if v := w.stacks["StackSet fleet"]; v.Pinned != d1 {
		t.Fatalf("the StackSet after the rollback: %+v", v)
	}
}

func TestViewStackSet(t *testing.T) {
	src := "oci://r/stacks/app@" + d1
	ss := func(mod func(*v1alpha1.StackSet)) *v1alpha1.StackSet {
		s := &v1alpha1.StackSet{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Generation: 2}}
		s.Spec.Template.Spec.Source = src
		s.Status.ObservedGeneration = 2
		mod(s)
		return s
	}
	stalled := []metav1.Condition{{Type: v1alpha1.CondStalled, Status: metav1.ConditionTrue, Reason: "TemplateInvalid", Message: "bad"}}
	for _, tc := range []struct {
		name            string
		ss              *v1alpha1.StackSet
		ready           bool
		failed, pending string
	}{
		{name: "not reconciled", ss: ss(func(s *v1alpha1.StackSet) {
			s.Status.ObservedGeneration = 1
			s.Status.Rollout = &v1alpha1.StackSetRollout{Digest: d1, Phase: v1alpha1.RolloutDone}
		}),
			pending: "not reconciled yet"},
		{name: "done", ss: ss(func(s *v1alpha1.StackSet) {
			s.Status.Rollout = &v1alpha1.StackSetRollout{Digest: d1, Phase: v1alpha1.RolloutDone}
		}), ready: true},
		{name: "done on another digest", ss: ss(func(s *v1alpha1.StackSet) {
			s.Status.Rollout = &v1alpha1.StackSetRollout{Digest: d2, Phase: v1alpha1.RolloutDone}
		}),
			pending: "has not started"},
		{name: "halted", ss: ss(func(s *v1alpha1.StackSet) {
			s.Status.Rollout = &v1alpha1.StackSetRollout{Digest: d1, Phase: v1alpha1.RolloutHalted, Message: "step rest failed"}
		}), failed: "its rollout halted: step rest failed"},
		{name: "stalled", ss: ss(func(s *v1alpha1.StackSet) { s.Status.Conditions = stalled }), failed: "Stalled TemplateInvalid: bad"},
		{name: "progressing", ss: ss(func(s *v1alpha1.StackSet) {
			s.Status.Rollout = &v1alpha1.StackSetRollout{Digest: d1, Phase: v1alpha1.RolloutProgressing, Message: "1 of 3"}
		}), pending: "rolling out: 1 of 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := viewStackSet(tc.ss)
			if v.Pinned != d1 || v.Ready != tc.ready || !strings.Contains(v.Failed, tc.failed) || (tc.failed == "") != (v.Failed == "") || !strings.Contains(v.NotReady, tc.pending) {
				t.Fatalf("view %+v", v)
			}
		})
	}
}

func TestValidatePipelineStackSet(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*v1alpha1.PipelineSpec)
		want string
	}{
		{"test gate without Stacks", func(s *v1alpha1.PipelineSpec) { s.Stages[1].Gates = []v1alpha1.Gate{{Test: &v1alpha1.TestGate{}}} },
			"spec.stages[1].gates[0]: a test or cel gate runs on the stage's Stacks, and this stage has none"},
		{"a StackSet twice", func(s *v1alpha1.PipelineSpec) { s.Stages[0].StackSet = &v1alpha1.PipelineStackRef{Name: "fleet"} },
			"spec.stages[1].stackSet: StackSet delivery/fleet is spec.stages[0].stackSet already"},
		{"neither", func(s *v1alpha1.PipelineSpec) { s.Stages[1].StackSet = nil }, "spec.stages[1].stacks: no Stack (and no stackSet)"},
		{"digest and semver", func(s *v1alpha1.PipelineSpec) { s.Follow.Digest = d1 }, "spec.follow: give exactly one of semver, tag and digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := fleetStages(nil)
			tc.mod(spec)
			if got := strings.Join(validatePipeline("delivery", spec), "; "); !strings.Contains(got, tc.want) {
				t.Fatalf("problems %q, want %q", got, tc.want)
			}
		})
	}
	ok := fleetStages(func(s *v1alpha1.Stage) {
		s.Gates = []v1alpha1.Gate{{Prometheus: &v1alpha1.PrometheusGate{Address: "http://p:9090", Query: "up", Max: 1}}}
	})
	ok.Follow = v1alpha1.Follow{Digest: d1}
	if got := validatePipeline("delivery", ok); len(got) != 0 {
		t.Fatalf("a StackSet stage with a prometheus gate, following a digest: %v", got)
	}
}

func TestStackSetOfAnotherNamespaceIsForbidden(t *testing.T) {
	p := &v1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "delivery"}, Spec: *fleetStages(nil)}
	if got := stackSetRefusals(p); len(got) != 0 {
		t.Fatalf("own namespace refused: %v", got)
	}
	p.Spec.Stages[1].StackSet = &v1alpha1.PipelineStackRef{Namespace: "team-b", Name: "fleet"}
	got := stackSetRefusals(p)
	if len(got) != 1 || !strings.Contains(got[0], "convoy.dev/v1alpha1 StackSet team-b/fleet (spec.stages[1].stackSet)") {
		t.Fatalf("refusals %v", got)
	}
}
