package pipeline

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	d1 = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	d2 = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

func twoStages(mod func(prod *v1alpha1.Stage)) *v1alpha1.PipelineSpec {
	one := int32(1)
	spec := &v1alpha1.PipelineSpec{
		Source: "oci://r/stacks/app",
		Follow: v1alpha1.Follow{Semver: ">=1.0.0"},
		Stages: []v1alpha1.Stage{
			{Name: "staging", Stacks: v1alpha1.StackRefs("staging"), Gates: []v1alpha1.Gate{{Test: &v1alpha1.TestGate{}}}},
			{Name: "production", Stacks: v1alpha1.StackRefs("prod-a", "prod-b"), MaxParallel: &one},
		},
	}
	if mod != nil {
		mod(&spec.Stages[1])
	}
	return spec
}

// world runs the stage machine step after step against simulated Stacks
// that become Ready on a digest one step after they are pinned to it.
type world struct {
	t      *testing.T
	spec   *v1alpha1.PipelineSpec
	now    time.Time
	stages []v1alpha1.StageStatus
	stacks map[string]stackView
	// fail makes a Stack fail on a digest; gateFails fails the gates on
	// a digest.
	fail      map[string]string
	gateFails map[string]bool
	gateCalls int
	pinLog    []string
	pinStep   map[string]int
	steps     int
	notices   []stageNotice
}

func newWorld(t *testing.T, spec *v1alpha1.PipelineSpec) *world {
	w := &world{t: t, spec: spec, now: time.Unix(1_700_000_000, 0), stacks: map[string]stackView{}, fail: map[string]string{}, gateFails: map[string]bool{}, pinStep: map[string]int{}}
	for _, s := range spec.Stages {
		for _, name := range stageTargets("delivery", s) {
			w.stacks[name] = stackView{NotReady: "NoSource"}
		}
	}
	return w
}

// step runs the machine once, then lets each pinned Stack reconcile.
func (w *world) step(latest string) machineOutput {
	w.t.Helper()
	out := stepStages(machineInput{
		Namespace: "delivery", Name: "shop", Now: w.now, Latest: latest, Spec: w.spec, Stages: w.stages, Stacks: maps.Clone(w.stacks),
		Gate: func(_, _ int, d string, _ time.Time) gateVerdict {
			w.gateCalls++
			if w.gateFails[d] {
				return gateVerdict{Failed: true, Output: "bad-test-fail: Failed"}
			}
			return gateVerdict{}
		},
	})
	w.stages = out.Stages
	w.notices = append(w.notices, out.Notices...)
	// Already pinned Stacks become Ready (or fail) on their digest;
	// the new pins take effect, not Ready yet.
	for name, v := range w.stacks {
		if v.Pinned != "" && !v.Ready && v.Failed == "" {
			if w.fail[name] == v.Pinned {
				v.Failed = "ApplyFailed: boom"
			} else {
				v.Ready = true
			}
			w.stacks[name] = v
		}
	}
	for _, name := range slices.Sorted(maps.Keys(out.Pins)) {
		w.stacks[name] = stackView{Pinned: out.Pins[name], NotReady: "not reconciled yet"}
		w.pinLog = append(w.pinLog, name+"="+out.Pins[name][:8])
		w.pinStep[name] = w.steps
	}
	w.steps++
	w.now = w.now.Add(time.Second)
	return out
}

func (w *world) phases() string {
	var s []string
	for _, st := range w.stages {
		s = append(s, st.Name+":"+string(st.Phase))
	}
	return strings.Join(s, " ")
}

func (w *world) settle(latest string, steps int) {
	for range steps {
		w.step(latest)
	}
}

// A digest goes through staging first, then production one Stack at a
// time, and every stage ends Verified with its Stacks on it.
func TestStageMachinePromotesInOrderAndWaves(t *testing.T) {
	w := newWorld(t, twoStages(nil))
	w.settle(d1, 10)
	if got := w.phases(); got != "staging:Verified production:Verified" {
		t.Fatalf("phases %s", got)
	}
	if want := []string{"staging=sha256:1", "prod-a=sha256:1", "prod-b=sha256:1"}; !slices.Equal(w.pinLog, want) {
		t.Fatalf("pins %v, want %v (staging first, then production one at a time)", w.pinLog, want)
	}
	// maxParallel 1: prod-b is pinned only once prod-a was Ready (a step
	// after its pin).
	if w.pinStep["prod-b"] <= w.pinStep["prod-a"] {
		t.Fatalf("prod-a pinned at step %d, prod-b at step %d", w.pinStep["prod-a"], w.pinStep["prod-b"])
	}
	for n, v := range w.stacks {
		if v.Pinned != d1 || !v.Ready {
			t.Errorf("Stack %s: %+v", n, v)
		}
	}
	if w.stages[0].Verified != d1 || w.stages[1].Verified != d1 {
		t.Errorf("verified: %+v", w.stages)
	}
	var events []string
	for _, n := range w.notices {
		events = append(events, n.Stage+":"+string(n.Event))
	}
	if !slices.Equal(events, []string{"staging:StageVerified", "production:StageVerified"}) {
		t.Errorf("notices %v", events)
	}
}

// Without maxParallel, a stage pins all its Stacks at once.
func TestStageMachineDefaultParallelism(t *testing.T) {
	w := newWorld(t, twoStages(func(p *v1alpha1.Stage) { p.MaxParallel = nil }))
	w.settle(d1, 10)
	if want := []string{"staging=sha256:1", "prod-a=sha256:1", "prod-b=sha256:1"}; !slices.Equal(w.pinLog, want) {
		t.Fatalf("pins %v", w.pinLog)
	}
	// prod-a and prod-b were pinned in the same step: count the steps.
	w2 := newWorld(t, twoStages(func(p *v1alpha1.Stage) { p.MaxParallel = nil }))
	pinsPerStep := []int{}
	for range 6 {
		pinsPerStep = append(pinsPerStep, len(w2.step(d1).Pins))
	}
	if !slices.Contains(pinsPerStep, 2) {
		t.Fatalf("pins per step %v: production's two Stacks never pinned together", pinsPerStep)
	}
}

// A failing gate fails the stage, names the gate with its output, and
// the later stage keeps its digest; a newer digest starts over.
func TestStageMachineGateFailureHalts(t *testing.T) {
	w := newWorld(t, twoStages(nil))
	w.settle(d1, 10)
	w.gateFails[d2] = true
	w.settle(d2, 10)
	s := w.stages[0]
	if s.Phase != v1alpha1.PhaseFailed || s.Digest != d2 || s.FailedGate == nil || s.FailedGate.Gate != "spec.stages[0].gates[0] (test)" || s.FailedGate.Output != "bad-test-fail: Failed" {
		t.Fatalf("staging: %+v %+v", s, s.FailedGate)
	}
	if s.Verified != d1 {
		t.Errorf("staging's last verified digest %s", s.Verified)
	}
	if w.stacks["staging"].Pinned != d2 || w.stacks["prod-a"].Pinned != d1 || w.stacks["prod-b"].Pinned != d1 {
		t.Fatalf("pins after the failure: %+v", w.stacks)
	}
	if w.stages[1].Phase != v1alpha1.PhaseVerified || w.stages[1].Digest != d1 {
		t.Fatalf("production: %+v", w.stages[1])
	}
	failed := 0
	for _, n := range w.notices {
		if n.Event == v1alpha1.EventStageFailed {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d StageFailed notices", failed)
	}
	// Looking again changes nothing: no pin, the gate is not run again.
	calls := w.gateCalls
	if out := w.step(d2); len(out.Pins) != 0 || w.gateCalls != calls {
		t.Fatalf("a failed stage pinned %v or ran its gates again", out.Pins)
	}
}

// rollback pins the failed stage's Stacks back to what it verified.
func TestStageMachineRollback(t *testing.T) {
	spec := twoStages(nil)
	spec.Stages[0].Rollback = true
	w := newWorld(t, spec)
	w.settle(d1, 10)
	w.fail["staging"] = d2
	w.settle(d2, 6)
	s := w.stages[0]
	if s.Phase != v1alpha1.PhaseFailed || !strings.Contains(s.Message, "Stack staging failed on "+d2+": ApplyFailed: boom") || !strings.Contains(s.Message, "rolled back to "+d1) {
		t.Fatalf("staging: %+v", s)
	}
	if w.stacks["staging"].Pinned != d1 {
		t.Fatalf("staging not rolled back: %+v", w.stacks["staging"])
	}
}

// A Stack that stops being Ready during the bake fails the stage.
func TestStageMachineNotReadyDuringBake(t *testing.T) {
	spec := twoStages(nil)
	spec.Stages[0].Bake = &metav1.Duration{Duration: time.Hour}
	w := newWorld(t, spec)
	w.settle(d1, 4)
	if w.stages[0].Phase != v1alpha1.PhaseBaking {
		t.Fatalf("staging: %+v", w.stages[0])
	}
	if out := w.step(d1); out.Requeue <= 0 || out.Requeue > gateRecheck {
		t.Fatalf("a baking stage requeues after %s", out.Requeue)
	}
	w.stacks["staging"] = stackView{Pinned: d1, NotReady: "Ready=False Drifted: 1 object changed"}
	w.step(d1)
	if s := w.stages[0]; s.Phase != v1alpha1.PhaseFailed || !strings.Contains(s.Message, "stopped being Ready") || !strings.Contains(s.Message, "Drifted") {
		t.Fatalf("staging: %+v", s)
	}
	if w.stacks["prod-a"].Pinned != "" {
		t.Fatal("production received a digest staging never verified")
	}
}

// A bake lasts its time: verified only once it has passed.
func TestStageMachineBakeTime(t *testing.T) {
	spec := twoStages(nil)
	spec.Stages[0].Bake = &metav1.Duration{Duration: 90 * time.Second}
	w := newWorld(t, spec)
	w.settle(d1, 4)
	w.now = w.now.Add(60 * time.Second)
	w.step(d1)
	if w.stages[0].Phase != v1alpha1.PhaseBaking {
		t.Fatalf("verified before the bake ended: %+v", w.stages[0])
	}
	w.now = w.now.Add(31 * time.Second)
	w.step(d1)
	if w.stages[0].Phase != v1alpha1.PhaseVerified {
		t.Fatalf("not verified after the bake: %+v", w.stages[0])
	}
}

// A manual stage waits for an approval of exactly its digest.
func TestStageMachineManualApproval(t *testing.T) {
	w := newWorld(t, twoStages(func(p *v1alpha1.Stage) { p.Approval = v1alpha1.ApprovalManual }))
	w.settle(d1, 6)
	if w.stages[1].Phase != v1alpha1.PhaseAwaitingApproval || w.stages[1].Digest != d1 || w.stacks["prod-a"].Pinned != "" {
		t.Fatalf("production: %+v, prod-a %+v", w.stages[1], w.stacks["prod-a"])
	}
	// The message is a command to run as it stands: the Pipeline's name
	// and namespace filled in.
	if want := "convoy promote shop production -n delivery --digest " + d1; !strings.Contains(w.stages[1].Message, want) {
		t.Errorf("production's message %q does not say %q", w.stages[1].Message, want)
	}
	w.spec.Approvals = []v1alpha1.StageApproval{{Stage: "production", Digest: d2}}
	w.settle(d1, 3)
	if w.stages[1].Phase != v1alpha1.PhaseAwaitingApproval {
		t.Fatalf("an approval of another digest let production go: %+v", w.stages[1])
	}
	w.spec.Approvals = []v1alpha1.StageApproval{{Stage: "production", Digest: d1}}
	w.settle(d1, 8)
	if w.stages[1].Phase != v1alpha1.PhaseVerified || w.stacks["prod-b"].Pinned != d1 {
		t.Fatalf("production after approval: %+v", w.stages[1])
	}
	approvals := 0
	for _, n := range w.notices {
		if n.Event == v1alpha1.EventApprovalRequired {
			approvals++
		}
	}
	if approvals == 0 {
		t.Error("no ApprovalRequired notice")
	}
}

// validatePipeline names the field of each problem.
func TestValidatePipeline(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*v1alpha1.PipelineSpec)
		want string
	}{
		{"ok", func(*v1alpha1.PipelineSpec) {}, ""},
		{"semver", func(s *v1alpha1.PipelineSpec) { s.Follow.Semver = ">=1.x.y!" }, `spec.follow.semver ">=1.x.y!"`},
		{"both", func(s *v1alpha1.PipelineSpec) { s.Follow.Tag = "main" }, "spec.follow: give exactly one"},
		{"stage twice", func(s *v1alpha1.PipelineSpec) { s.Stages[1].Name = "staging" }, `spec.stages[1].name: stage "staging" is spec.stages[0] already`},
		{"stack twice", func(s *v1alpha1.PipelineSpec) { s.Stages[1].Stacks = v1alpha1.StackRefs("staging") }, "spec.stages[1].stacks[0]: Stack staging is spec.stages[0].stacks[0] already"},
		{"cel", func(s *v1alpha1.PipelineSpec) {
			s.Stages[0].Gates = []v1alpha1.Gate{{CEL: "objects.all(o, o.kind ==)"}}
		}, "spec.stages[0].gates[0].cel: "},
		{"cel not bool", func(s *v1alpha1.PipelineSpec) { s.Stages[0].Gates = []v1alpha1.Gate{{CEL: "size(objects)"}} }, "spec.stages[0].gates[0].cel: CEL expression must evaluate to a bool; this one is an int"},
		{"two kinds", func(s *v1alpha1.PipelineSpec) {
			s.Stages[0].Gates = []v1alpha1.Gate{{CEL: "true", Test: &v1alpha1.TestGate{}}}
		}, "spec.stages[0].gates[0]: a gate is exactly one"},
		{"source with tag", func(s *v1alpha1.PipelineSpec) { s.Source = "oci://r/stacks/app:v1" }, "spec.source: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := twoStages(nil)
			tc.mod(spec)
			got := strings.Join(validatePipeline("", spec), "; ")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNewestMatching(t *testing.T) {
	tags := []string{"latest", "1.0.0", "1.10.0", "1.2.0", "v1.9.0", "2.0.0-rc.1", "main"}
	for c, want := range map[string]string{">=1.0.0": "1.10.0", "~1.2": "1.2.0", ">=3": "", ">=2.0.0-0": "2.0.0-rc.1"} {
		if got, err := newestMatching(c, tags); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", c, got, err, want)
		}
	}
}

// A gate still running keeps its stage baking, saying since when, and
// looks again soon; the last check of a bake asks for verdicts from once
// the bake was over.
func TestStageMachineGateRunning(t *testing.T) {
	spec := twoStages(nil)
	spec.Stages[0].Bake = &metav1.Duration{Duration: time.Minute}
	now := time.Unix(1_700_000_000, 0)
	bakingSince := metav1.NewTime(now.Add(-2 * time.Minute))
	started := now.Add(-30 * time.Second)
	var asked []time.Time
	out := stepStages(machineInput{
		Now: now, Latest: d1, Spec: spec,
		Stages: []v1alpha1.StageStatus{{Name: "staging", Digest: d1, Phase: v1alpha1.PhaseBaking, Since: &bakingSince}},
		Stacks: map[string]stackView{"staging": {Pinned: d1, Ready: true}},
		Gate: func(_, _ int, _ string, since time.Time) gateVerdict {
			asked = append(asked, since)
			return gateVerdict{Pending: true, Running: started}
		},
	})
	s := out.Stages[0]
	if s.Phase != v1alpha1.PhaseBaking || !strings.Contains(s.Message, "gate spec.stages[0].gates[0] (test) running since "+started.UTC().Format(time.RFC3339)) {
		t.Fatalf("stage %s: %s", s.Phase, s.Message)
	}
	if out.Requeue != 5*time.Second {
		t.Fatalf("requeue %s", out.Requeue)
	}
	if len(asked) != 1 || !asked[0].Equal(bakingSince.Add(time.Minute)) {
		t.Fatalf("asked for verdicts since %v, want the bake's end %v", asked, bakingSince.Add(time.Minute))
	}
	if out.Stages[1].Phase == v1alpha1.PhasePromoting || len(out.Pins) > 0 {
		t.Fatalf("production moved while staging's gate runs: %+v %v", out.Stages[1], out.Pins)
	}
}

// Each gate's last result is in the stage's status, in the spec's order: a
// reader sees which gate passed, runs, waits or failed, and why.
func TestStageMachineRecordsEachGatesResult(t *testing.T) {
	spec := twoStages(nil)
	spec.Stages[0].Bake = &metav1.Duration{Duration: time.Minute}
	spec.Stages[0].Gates = []v1alpha1.Gate{{CEL: "true"}, {Test: &v1alpha1.TestGate{}}, {CEL: "false"}}
	now := time.Unix(1_700_000_000, 0)
	since := metav1.NewTime(now.Add(-10 * time.Second))
	started := now.Add(-3 * time.Second)
	in := machineInput{
		Now: now, Latest: d1, Spec: spec,
		Stages: []v1alpha1.StageStatus{{Name: "staging", Digest: d1, Phase: v1alpha1.PhaseBaking, Since: &since}},
		Stacks: map[string]stackView{"staging": {Pinned: d1, Ready: true}},
		Gate: func(_, j int, _ string, _ time.Time) gateVerdict {
			return []gateVerdict{{}, {Pending: true, Running: started}, {Pending: true}}[j]
		},
	}
	got := stepStages(in).Stages[0].Gates
	want := []string{"spec.stages[0].gates[0] (cel) Passed", "spec.stages[0].gates[1] (test) Running", "spec.stages[0].gates[2] (cel) Waiting"}
	if len(got) != len(want) {
		t.Fatalf("gates %+v", got)
	}
	for j, g := range got {
		if g.Gate+" "+g.Result != want[j] {
			t.Errorf("gate %d: %s %s, want %s", j, g.Gate, g.Result, want[j])
		}
	}
	if got[1].Time == nil || !got[1].Time.Time.Equal(started) || got[2].Time != nil {
		t.Errorf("times: running %v (want its start), waiting %v (want none)", got[1].Time, got[2].Time)
	}
	long := strings.Repeat("x", 3000) + "the test pod failed: exit 1"
	in.Gate = func(_, j int, _ string, _ time.Time) gateVerdict {
		return []gateVerdict{{}, {Failed: true, Output: long}, {}}[j]
	}
	s := stepStages(in).Stages[0]
	if s.Phase != v1alpha1.PhaseFailed || s.Gates[1].Result != v1alpha1.GateFailed || len(s.Gates[1].Output) > v1alpha1.MaxGateOutput ||
		!strings.HasSuffix(s.Gates[1].Output, "the test pod failed: exit 1") || s.Gates[0].Result != v1alpha1.GatePassed {
		t.Fatalf("after a failure: %s %+v", s.Phase, s.Gates)
	}
	// A new digest starts without the old digest's results.
	in.Latest, in.Stages = d2, []v1alpha1.StageStatus{s}
	in.Stages[0].Phase = v1alpha1.PhaseVerified
	if s := stepStages(in).Stages[0]; s.Digest != d2 || s.Gates != nil {
		t.Fatalf("on a new digest: %s %+v", s.Digest, s.Gates)
	}
}
