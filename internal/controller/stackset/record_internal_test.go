package stackset

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What the StackSet's Ready says of a rollout from its Stacks and steps:
// a Stack failing on its step's digest (its cluster unreachable) holds
// the rollout, named with its cluster; a Stack still planning does not; a
// failed step names its clusters.
func TestRecordNamesTheClusterThatHoldsTheRollout(t *testing.T) {
	const d = "sha256:" + "ab12"
	stack := func(name, reason, msg string) *v1alpha1.Stack {
		st := &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 2}}
		st.Spec.Source = "oci://r.example/stacks/app@" + d
		st.Status.ObservedGeneration = 2
		cs := metav1.ConditionFalse
		if reason == "" {
			cs, reason = metav1.ConditionTrue, v1alpha1.ReasonUpToDate
		}
		meta.SetStatusCondition(&st.Status.Conditions, metav1.Condition{Type: v1alpha1.CondReady, Status: cs, Reason: reason, Message: msg})
		return st
	}
	gen := func(names ...string) []generated {
		var out []generated
		for _, n := range names {
			out = append(out, generated{element: element{name: n, cluster: &Registration{Namespace: "fleet", Name: n}}, stack: &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Name: "web-" + n}}})
		}
		return out
	}
	steps := map[string]string{"web-c1": "one", "web-c2": "two", "web-c3": "three"}
	pipeline := func(phases ...v1alpha1.StagePhase) *v1alpha1.Pipeline {
		p := &v1alpha1.Pipeline{}
		for i, ph := range phases {
			s := v1alpha1.StageStatus{Name: []string{"one", "two", "three"}[i], Phase: ph}
			if ph != v1alpha1.PhaseWaiting {
				s.Digest = d
			}
			if ph == v1alpha1.PhaseFailed {
				s.Message = "gate spec.stages[1].gates[0] (cel) failed on " + d
			}
			p.Status.Stages = append(p.Status.Stages, s)
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		stacks []*v1alpha1.Stack
		pl     *v1alpha1.Pipeline
		reason string
		says   []string
	}{
		{
			name:   "unreachable cluster in step two",
			stacks: []*v1alpha1.Stack{stack("web-c1", "", ""), stack("web-c2", v1alpha1.ReasonPlanFailed, "dial tcp 127.0.0.1:1: connect: connection refused"), stack("web-c3", v1alpha1.ReasonNoSource, "")},
			pl:     pipeline(v1alpha1.PhaseVerified, v1alpha1.PhasePromoting, v1alpha1.PhaseWaiting),
			reason: v1alpha1.ReasonHalted,
			says:   []string{"step two holds on " + d, "Stack web-c2 on cluster fleet/c2 failed: PlanFailed: dial tcp 127.0.0.1:1: connect: connection refused", "later steps wait"},
		},
		{
			name:   "still planning",
			stacks: []*v1alpha1.Stack{stack("web-c1", "", ""), stack("web-c2", v1alpha1.ReasonPlanned, "applying"), stack("web-c3", v1alpha1.ReasonNoSource, "")},
			pl:     pipeline(v1alpha1.PhaseVerified, v1alpha1.PhasePromoting, v1alpha1.PhaseWaiting),
			reason: v1alpha1.ReasonRolling,
			says:   []string{"web-c2 (cluster fleet/c2) Planned", "step two Promoting"},
		},
		{
			name:   "failed gate",
			stacks: []*v1alpha1.Stack{stack("web-c1", "", ""), stack("web-c2", "", ""), stack("web-c3", v1alpha1.ReasonNoSource, "")},
			pl:     pipeline(v1alpha1.PhaseVerified, v1alpha1.PhaseFailed, v1alpha1.PhaseWaiting),
			reason: v1alpha1.ReasonHalted,
			says:   []string{"step two failed on " + d + " (cluster fleet/c2): gate spec.stages[1].gates[0] (cel) failed"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := &v1alpha1.StackSet{}
			r := &Reconciler{}
			r.record(ss, gen("c1", "c2", "c3"), tc.stacks, steps, tc.pl)
			c := meta.FindStatusCondition(ss.Status.Conditions, v1alpha1.CondReady)
			if c == nil || c.Reason != tc.reason {
				t.Fatalf("Ready: %+v, want reason %s", c, tc.reason)
			}
			for _, s := range tc.says {
				if !strings.Contains(c.Message, s) {
					t.Errorf("Ready's message %q does not say %q", c.Message, s)
				}
			}
		})
	}
}
