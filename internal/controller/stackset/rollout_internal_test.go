package stackset

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rolloutOf: Done only when every Stack is Ready on the digest with its
// plan applied and every step verified it; Halted on a failed step of
// the digest, or (without a strategy) a Stack failed on it.
func TestRolloutOf(t *testing.T) {
	d1 := "sha256:" + strings.Repeat("1", 64)
	d2 := "sha256:" + strings.Repeat("2", 64)
	stack := func(name, digest string, ready bool, reason string) *v1alpha1.Stack {
		st := &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 3}}
		st.Spec.Source = "oci://r/app@" + digest
		st.Status.ObservedGeneration = 3
		st.Status.Source = &v1alpha1.SourceStatus{Digest: digest}
		st.Status.Plan = &v1alpha1.PlanStatus{SourceDigest: digest, Digest: "sha256:plan", HasChanges: true}
		c := metav1.Condition{Type: v1alpha1.CondReady, Status: metav1.ConditionFalse, Reason: reason, ObservedGeneration: 3}
		if ready {
			st.Status.LastAppliedPlan = "sha256:plan"
			c.Status, c.Reason = metav1.ConditionTrue, "UpToDate"
		}
		st.Status.Conditions = []metav1.Condition{c}
		return st
	}
	plain := &v1alpha1.StackSet{}
	plain.Spec.Template.Spec.Source = "oci://r/app@" + d1
	rolling := plain.DeepCopy()
	rolling.Spec.Strategy = &v1alpha1.StackSetStrategy{Rolling: &v1alpha1.RollingStrategy{}}
	pl := func(stages ...v1alpha1.StageStatus) *v1alpha1.Pipeline {
		return &v1alpha1.Pipeline{Status: v1alpha1.PipelineStatus{Latest: &v1alpha1.Artifact{Digest: d1}, Stages: stages}}
	}
	verified := v1alpha1.StageStatus{Name: "one", Digest: d1, Phase: v1alpha1.PhaseVerified, Verified: d1}
	for _, tc := range []struct {
		name   string
		ss     *v1alpha1.StackSet
		stacks []*v1alpha1.Stack
		pl     *v1alpha1.Pipeline
		phase  v1alpha1.RolloutPhase
		msg    string
	}{
		{"every Stack Ready", plain, []*v1alpha1.Stack{stack("a", d1, true, ""), stack("b", d1, true, "")}, nil, v1alpha1.RolloutDone, "every Stack (2) is Ready"},
		{"one on the old digest", plain, []*v1alpha1.Stack{stack("a", d1, true, ""), stack("b", d2, true, "")}, nil, v1alpha1.RolloutProgressing, "1 of 2 Stacks Ready"},
		{"a plan not applied yet", plain, []*v1alpha1.Stack{stack("a", d1, false, "ApprovalRequired")}, nil, v1alpha1.RolloutProgressing, "0 of 1"},
		{"an apply failed", plain, []*v1alpha1.Stack{stack("a", d1, true, ""), stack("b", d1, false, v1alpha1.ReasonApplyFailed)}, nil, v1alpha1.RolloutHalted, "Stack b failed on " + d1},
		{"steps verified", rolling, []*v1alpha1.Stack{stack("a", d1, true, "")}, pl(verified), v1alpha1.RolloutDone, "every step (1) verified it"},
		{"a step still verified on the old digest", rolling, []*v1alpha1.Stack{stack("a", d1, true, "")},
			pl(v1alpha1.StageStatus{Name: "one", Digest: d2, Phase: v1alpha1.PhaseVerified, Verified: d2}), v1alpha1.RolloutProgressing, "step one Verified"},
		{"a failed step", rolling, []*v1alpha1.Stack{stack("a", d1, true, "")},
			pl(verified, v1alpha1.StageStatus{Name: "two", Digest: d1, Phase: v1alpha1.PhaseFailed, Message: "gate failed"}), v1alpha1.RolloutHalted, "step two failed on " + d1 + ": gate failed"},
		{"rolling, its Pipeline not made yet", rolling, []*v1alpha1.Stack{stack("a", d1, true, "")}, nil, v1alpha1.RolloutProgressing, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ro := rolloutOf(tc.ss, tc.stacks, tc.pl, map[string]string{})
			if ro == nil || ro.Digest != d1 || ro.Phase != tc.phase || !strings.Contains(ro.Message, tc.msg) {
				t.Fatalf("rollout %+v, want %s %q", ro, tc.phase, tc.msg)
			}
		})
	}
	if ro := rolloutOf(&v1alpha1.StackSet{}, nil, nil, nil); ro != nil {
		t.Fatalf("no source: %+v", ro)
	}
}
