package main

import (
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
)

// get stacks -o wide says who approved the plan waiting, with the count it
// needs, else who approved the plan last applied.
func TestApprovedByColumn(t *testing.T) {
	const waiting, applied = "sha256:bb", "sha256:aa"
	for _, tc := range []struct {
		name             string
		current, lastApp *v1alpha1.ApprovalStatus
		want             string
	}{
		{name: "auto", want: "-"},
		{name: "waiting, none yet", current: &v1alpha1.ApprovalStatus{Digest: waiting, Required: 1}, want: "- (0/1)"},
		{name: "waiting, one of two", current: &v1alpha1.ApprovalStatus{Digest: waiting, Required: 2, ApprovedBy: []string{"alice"}},
			lastApp: &v1alpha1.ApprovalStatus{Digest: applied, ApprovedBy: []string{"carol"}}, want: "alice (1/2)"},
		{name: "applied", current: &v1alpha1.ApprovalStatus{Digest: applied, Required: 2, ApprovedBy: []string{"alice", "bob"}},
			lastApp: &v1alpha1.ApprovalStatus{Digest: applied, Required: 2, ApprovedBy: []string{"alice", "bob"}}, want: "alice,bob"},
		{name: "applied, unrecorded", lastApp: &v1alpha1.ApprovalStatus{Digest: applied, Unrecorded: true}, want: "(unrecorded)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &v1alpha1.Stack{Status: v1alpha1.StackStatus{LastAppliedPlan: applied, Approval: tc.current, LastAppliedApproval: tc.lastApp}}
			if got := approvedByColumn(st); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
