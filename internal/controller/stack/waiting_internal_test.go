package stack

import (
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A plan that waits says so in Ready as docs/controller.md does: Drifted
// for a plan that only restores drift, in either approval mode;
// ApprovalRequired for any other. When both hold (drift with manual
// approval, or drift among other changes), the message names both.
func TestWaitingReadyNamesDriftAndApproval(t *testing.T) {
	const d = "sha256:aa"
	for _, tc := range []struct {
		name      string
		approval  v1alpha1.Approval
		driftOnly bool
		drifted   int
		reason    string // Ready's
		approval2 metav1.ConditionStatus
		says      []string
	}{
		{name: "auto, drift only", driftOnly: true, drifted: 2, reason: v1alpha1.ReasonDrifted, approval2: metav1.ConditionFalse,
			says: []string{"2 objects changed outside convoy", "driftCorrection is false", "convoy approve shop"}},
		{name: "manual, drift only", approval: v1alpha1.ApprovalManual, driftOnly: true, drifted: 1, reason: v1alpha1.ReasonDrifted, approval2: metav1.ConditionTrue,
			says: []string{"1 object changed outside convoy", "driftCorrection is false", "waits for approval", "convoy approve shop"}},
		{name: "manual, changes and drift", approval: v1alpha1.ApprovalManual, drifted: 3, reason: v1alpha1.ReasonApprovalRequired, approval2: metav1.ConditionTrue,
			says: []string{"waits for approval", "3 objects changed outside convoy"}},
		{name: "manual, changes", approval: v1alpha1.ApprovalManual, reason: v1alpha1.ReasonApprovalRequired, approval2: metav1.ConditionTrue,
			says: []string{"waits for approval"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "apps"}, Spec: v1alpha1.StackSpec{Approval: tc.approval}}
			p := &v1alpha1.PlanStatus{Digest: d, Summary: "1 to upgrade", HasChanges: true, DriftOnly: tc.driftOnly, Drifted: tc.drifted}
			st.Status.Plan = p
			r := &reconciler{}
			r.waiting(&stackRun{st: st}, p, time.Minute)
			rc, ac := findCond(st, v1alpha1.CondReady), findCond(st, v1alpha1.CondApprovalRequired)
			if rc == nil || rc.Status != metav1.ConditionFalse || rc.Reason != tc.reason {
				t.Fatalf("Ready %+v, want False %s", rc, tc.reason)
			}
			if ac == nil || ac.Status != tc.approval2 {
				t.Fatalf("ApprovalRequired %+v, want %s", ac, tc.approval2)
			}
			for _, s := range tc.says {
				if !strings.Contains(rc.Message, s) {
					t.Errorf("Ready's message %q does not say %q", rc.Message, s)
				}
			}
			if tc.drifted == 0 && strings.Contains(rc.Message, "outside convoy") {
				t.Errorf("Ready's message %q names drift the plan has not", rc.Message)
			}
		})
	}
}
