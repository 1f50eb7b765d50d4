package ctl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// convoy show --stackset prints the groups of identical plans with their
// Stacks, the steps and each Stack's row.
func TestWriteFleetPlan(t *testing.T) {
	ss := &v1alpha1.StackSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "fleet"}}
	ss.Status = v1alpha1.StackSetStatus{
		Summary:    "3 Stacks: 2 ApprovalRequired, 1 PlanFailed",
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Halted", Message: "step second failed"}},
		Plans: []v1alpha1.PlanGroup{
			{Plan: "0 to install, 1 to upgrade (upgrade release.api)", Stacks: []string{"web-c1", "web-c2"}},
			{Plan: "PlanFailed: forbidden", Stacks: []string{"web-c3"}},
		},
		Steps:   []v1alpha1.StageStatus{{Name: "second", Digest: "sha256:" + strings.Repeat("ab", 32), Phase: v1alpha1.PhaseFailed, Message: "gate failed"}},
		Stacks:  []v1alpha1.StackSetStack{{Name: "web-c1", Step: "canary", Cluster: "fleet/c1", State: "ApprovalRequired"}},
		Drifted: []string{"web-c2"},
	}
	var b bytes.Buffer
	if err := WriteFleetPlan(&b, ss); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"StackSet fleet/web: Ready=False Halted, 3 Stacks: 2 ApprovalRequired, 1 PlanFailed",
		"  2 Stacks: 0 to install, 1 to upgrade (upgrade release.api)\n    web-c1, web-c2\n",
		"  1 Stack: PlanFailed: forbidden\n    web-c3\n",
		"  second: abababababab Failed: gate failed",
		"Edited by hand and restored: web-c2",
		"web-c1  canary  fleet/c1  -       ApprovalRequired",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
}
