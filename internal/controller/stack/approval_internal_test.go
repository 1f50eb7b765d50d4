package stack

import (
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"k8s.io/utils/ptr"
)

// A plan that needs approval is applied once spec.approvals.required
// distinct users approved its digest; spec.approvedPlan alone approves it
// only when one approval is required and no entry names the digest.
func TestMayApplyCountsApprovals(t *testing.T) {
	const d, other = "sha256:aa", "sha256:bb"
	entry := func(digest, by string) v1alpha1.ApprovalEntry {
		return v1alpha1.ApprovalEntry{Digest: digest, ApprovedBy: by}
	}
	two := int32(2)
	for _, tc := range []struct {
		name       string
		approval   v1alpha1.Approval
		approved   string
		required   *int32
		entries    []v1alpha1.ApprovalEntry
		deniedBy   []string
		allow      []string
		want       bool
		unrecorded bool
	}{
		{name: "manual, one entry", approval: v1alpha1.ApprovalManual, entries: []v1alpha1.ApprovalEntry{entry(d, "alice")}, want: true},
		{name: "manual, an entry of another plan", approval: v1alpha1.ApprovalManual, entries: []v1alpha1.ApprovalEntry{entry(other, "alice")}, want: false},
		{name: "manual, approvedPlan alone", approval: v1alpha1.ApprovalManual, approved: d, want: true, unrecorded: true},
		{name: "manual, two required, one user", approval: v1alpha1.ApprovalManual, approved: d, required: &two, entries: []v1alpha1.ApprovalEntry{entry(d, "alice")}, want: false},
		{name: "manual, two required, one user twice", approval: v1alpha1.ApprovalManual, approved: d, required: &two, entries: []v1alpha1.ApprovalEntry{entry(d, "alice"), entry(d, "alice")}, want: false},
		{name: "manual, two required, approvedPlan alone", approval: v1alpha1.ApprovalManual, approved: d, required: &two, want: false},
		{name: "manual, two required, two users", approval: v1alpha1.ApprovalManual, approved: d, required: &two, entries: []v1alpha1.ApprovalEntry{entry(d, "bob"), entry(d, "alice")}, want: true},
		{name: "manual, two required, one user per plan", approval: v1alpha1.ApprovalManual, required: &two, entries: []v1alpha1.ApprovalEntry{entry(d, "alice"), entry(other, "bob")}, want: false},
		{name: "auto", required: &two, want: true},
		{name: "auto, policy override, one of two", approved: d, allow: []string{"p"}, deniedBy: []string{"p"}, required: &two, entries: []v1alpha1.ApprovalEntry{entry(d, "alice")}, want: false},
		{name: "auto, policy override, two of two", approved: d, allow: []string{"p"}, deniedBy: []string{"p"}, required: &two, entries: []v1alpha1.ApprovalEntry{entry(d, "alice"), entry(d, "bob")}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &v1alpha1.Stack{Spec: v1alpha1.StackSpec{Approval: tc.approval, ApprovedPlan: tc.approved, AllowPolicies: tc.allow,
				Approvals: &v1alpha1.Approvals{Required: tc.required, Entries: tc.entries}}}
			p := &v1alpha1.PlanStatus{Digest: d, HasChanges: true, DeniedBy: tc.deniedBy}
			if got := mayApply(st, p); got != tc.want {
				t.Fatalf("mayApply = %v", got)
			}
			if a, _ := approvalOf(st, d); a.Unrecorded != tc.unrecorded {
				t.Fatalf("unrecorded = %v", a.Unrecorded)
			}
		})
	}
}

// The status says who approved the plan waiting, and the message how many
// more it needs.
func TestApprovalStatus(t *testing.T) {
	two := int32(2)
	st := &v1alpha1.Stack{Spec: v1alpha1.StackSpec{Approval: v1alpha1.ApprovalManual, Approvals: &v1alpha1.Approvals{Required: &two,
		Entries: []v1alpha1.ApprovalEntry{{Digest: "sha256:aa", ApprovedBy: "system:serviceaccount:team-a:alice"}}}}}
	st.Name, st.Namespace = "shop", "team-a"
	st.Status.Plan = &v1alpha1.PlanStatus{Digest: "sha256:aa", Summary: "1 to install", HasChanges: true}
	recordApproval(st)
	a := st.Status.Approval
	if a == nil || a.Digest != "sha256:aa" || a.Required != 2 || strings.Join(a.ApprovedBy, ",") != "system:serviceaccount:team-a:alice" {
		t.Fatalf("status.approval = %+v", a)
	}
	want := "plan sha256:aa (1 to install) has 1 of 2 approvals (system:serviceaccount:team-a:alice): it waits for 1 more by other users (convoy approve shop -n team-a)"
	if got := approvalWaits(st, st.Status.Plan); got != want {
		t.Fatalf("message\n got %s\nwant %s", got, want)
	}
	st.Spec.Approval = v1alpha1.ApprovalAuto
	recordApproval(st)
	if st.Status.Approval != nil {
		t.Fatalf("an auto Stack's plan needs no approval: status.approval = %+v", st.Status.Approval)
	}
}

// The Applied notification names who approved the plan applied; the
// ApprovalRequired one who approved so far.
func TestNotificationsSayWhoApproved(t *testing.T) {
	st := waitingStack()
	st.Spec.Approval = v1alpha1.ApprovalManual
	st.Status.Plan.HasChanges = true
	st.Spec.Approvals = &v1alpha1.Approvals{Required: ptr.To(int32(2)), Entries: []v1alpha1.ApprovalEntry{{Digest: "sha256:abc", ApprovedBy: "alice"}}}
	recordApproval(st)
	ds := recordNotices(st, noticesOf(st, "approval_required"), time.Now())
	if len(ds) != 1 || strings.Join(ds[0].payload.ApprovedBy, ",") != "alice" {
		t.Fatalf("ApprovalRequired deliveries %+v: want approvedBy alice", ds)
	}
	st.Status.LastAppliedPlan = "sha256:abc"
	st.Status.LastAppliedApproval = &v1alpha1.ApprovalStatus{Digest: "sha256:abc", Required: 2, ApprovedBy: []string{"alice", "bob"}}
	ds = recordNotices(st, noticesOf(st, "applied"), time.Now())
	if len(ds) != 2 {
		t.Fatalf("Applied deliveries %+v: want both notifications", ds)
	}
	body, err := ds[0].body(ds[0].target.Format)
	if err != nil || !strings.Contains(string(body), `"approvedBy":["alice","bob"]`) {
		t.Fatalf("Applied body %s %v", body, err)
	}
}
