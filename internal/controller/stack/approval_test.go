package stack_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller/controllertest"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// waitApprovalPolicy waits until the API server enforces the approval
// policy (it starts to a moment after it is created): until a dry-run
// create of an approved Stack by editor is refused.
func waitApprovalPolicy(t *testing.T, editor client.Client, ns string) {
	t.Helper()
	var err error
	devtest.Eventually(t, 60*time.Second, func() bool {
		st := newStack(ns, "policy-probe", "oci://example.invalid/stacks/app:v1", func(st *v1alpha1.Stack) {
			st.Spec.ApprovedPlan = "sha256:" + strings.Repeat("0", 64)
		})
		err = editor.Create(context.Background(), st, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "may not approve")
	}, func() string {
		return fmt.Sprintf("the approval policy is not enforced after 60s: a dry-run create by an editor: %v", err)
	})
}

// helmHistory is the description of each revision of a release, as helm
// history shows them.
func helmHistory(t *testing.T, ns, release string) string {
	t.Helper()
	out, err := cluster.Helm(t, "history", release, "-n", ns)
	if err != nil {
		t.Fatalf("helm history %s: %s %v", release, out, err)
	}
	return out
}

// eventNotes are the notes of the Stack's events with reason.
func eventNotes(t *testing.T, ns, reason string) []string {
	t.Helper()
	evs, err := cluster.Client().EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs.Items {
		if e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out
}

// Approving is the verb approve: a user who may edit Stacks but not
// approve them is refused by the admission policy — convoy approve, a
// plain approvedPlan, and turning manual approval off —, while their
// other edits pass; a user who may approve is recorded by name on the
// Stack, in its status, its Applied event and the release records; an
// approval naming another user is refused. An approvedPlan set without an
// entry (by an admin, as before approvals were recorded) still approves,
// and the status says who approved is not recorded.
func TestApprovalIsAPermission(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	ctx := context.Background()
	editor, _ := controllertest.ServiceAccount(t, ns, "editor", "convoy-editor")
	approver, approverName := controllertest.ServiceAccount(t, ns, "approver", "convoy-approver")
	waitApprovalPolicy(t, editor, ns)

	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.Approval = v1alpha1.ApprovalManual
		st.Spec.Interval = &metav1.Duration{Duration: time.Hour}
	}))
	startController(t, ns, nil)
	st := waitStack(t, c, ns, "shop", 60*time.Second, "ApprovalRequired", isCond("ApprovalRequired", metav1.ConditionTrue, "ApprovalRequired"))
	digest := st.Status.Plan.Digest

	// The editor: convoy approve, approvedPlan, approval auto are refused.
	_, err := ctl.Approve(ctx, editor, ns, "shop", digest)
	if err == nil || !strings.Contains(err.Error(), "may not approve convoy.dev/v1alpha1 Stack "+ns+"/shop") || !strings.Contains(err.Error(), "verb approve") {
		t.Fatalf("convoy approve by an editor: %v", err)
	}
	t.Logf("convoy approve by an editor: %v", err)
	for what, mod := range map[string]func(*v1alpha1.Stack){
		"spec.approvedPlan":  func(st *v1alpha1.Stack) { st.Spec.ApprovedPlan = digest },
		"spec.approval auto": func(st *v1alpha1.Stack) { st.Spec.Approval = v1alpha1.ApprovalAuto },
	} {
		st := getStack(t, editor, ns, "shop")
		mod(st)
		if err := editor.Update(ctx, st, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "may not approve") {
			t.Errorf("%s by an editor: %v", what, err)
		}
	}
	st = getStack(t, editor, ns, "shop")
	st.Spec.Vars = map[string]string{"message": "edited"}
	if err := editor.Update(ctx, st, client.DryRunAll); err != nil {
		t.Errorf("an editor's edit of spec.vars is refused: %v", err)
	}

	// The approver cannot approve in another's name.
	st = getStack(t, approver, ns, "shop")
	orig := st.DeepCopy()
	st.Spec.ApprovedPlan = digest
	st.Spec.Approvals = &v1alpha1.Approvals{Entries: []v1alpha1.ApprovalEntry{{Digest: digest, ApprovedBy: "alice"}}}
	err = approver.Patch(ctx, st, client.MergeFrom(orig))
	if err == nil || !strings.Contains(err.Error(), "may add only approvals of its own") || !strings.Contains(err.Error(), "names alice") {
		t.Fatalf("an approval forged as alice: %v", err)
	}
	t.Logf("an approval forged as alice: %v", err)
	if got := getStack(t, c, ns, "shop"); got.Status.LastAppliedPlan != "" || got.Spec.ApprovedPlan != "" {
		t.Fatalf("refused approvals changed the Stack:%s", describe(got))
	}

	// The approver approves as itself.
	a, err := ctl.ApprovePlan(ctx, approver, ctl.ApproveRequest{Namespace: ns, Name: "shop", Plan: digest})
	if err != nil {
		t.Fatal(err)
	}
	if a.By != approverName || !a.Complete {
		t.Fatalf("approved as %q (complete %v), want %s", a.By, a.Complete, approverName)
	}
	st = waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if e := st.Spec.Approvals; e == nil || len(e.Entries) != 1 || e.Entries[0].ApprovedBy != approverName || e.Entries[0].Digest != digest {
		t.Fatalf("spec.approvals %+v: want one entry of %s by %s", e, digest, approverName)
	}
	if la := st.Status.LastAppliedApproval; la == nil || la.Digest != digest || !slices.Equal(la.ApprovedBy, []string{approverName}) || la.Unrecorded {
		t.Fatalf("status.lastAppliedApproval %+v", la)
	}
	if msg := cond(st, "Ready").Message; !strings.Contains(msg, "approved by "+approverName) {
		t.Errorf("Ready says nothing of who approved: %s", msg)
	}
	h := helmHistory(t, ns, "api")
	if !strings.Contains(h, "Install complete (approved by "+approverName+")") {
		t.Errorf("helm history api does not say who approved:\n%s", h)
	}
	t.Logf("helm history api:\n%s", h)
	if notes := eventNotes(t, ns, "Applied"); !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "approved by "+approverName) }) {
		t.Errorf("no Applied event says who approved: %q", notes)
	}

	// approvedPlan without an entry, set by an admin: applied, unrecorded.
	update(t, c, ns, "shop", func(st *v1alpha1.Stack) { st.Spec.Vars = map[string]string{"message": "two"} })
	st = waitStack(t, c, ns, "shop", 60*time.Second, "a second plan", func(st *v1alpha1.Stack) bool {
		return isCond("ApprovalRequired", metav1.ConditionTrue, "ApprovalRequired")(st) && st.Status.Plan.Digest != digest
	})
	second := st.Status.Plan.Digest
	update(t, c, ns, "shop", func(st *v1alpha1.Stack) { st.Spec.ApprovedPlan = second })
	st = waitStack(t, c, ns, "shop", 60*time.Second, "applied", func(st *v1alpha1.Stack) bool {
		return isCond("Ready", metav1.ConditionTrue, "Applied")(st) && st.Status.LastAppliedPlan == second
	})
	if la := st.Status.LastAppliedApproval; la == nil || !la.Unrecorded || len(la.ApprovedBy) != 0 {
		t.Fatalf("status.lastAppliedApproval %+v: want unrecorded", la)
	}
}

// spec.approvals.required 2: one approval applies nothing, the same user
// cannot approve twice, a second user's approval applies the plan, and
// both are recorded.
func TestTwoApprovalsRequired(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	ctx := context.Background()
	editor, _ := controllertest.ServiceAccount(t, ns, "editor", "convoy-editor")
	alice, aliceName := controllertest.ServiceAccount(t, ns, "alice", "convoy-approver")
	bob, bobName := controllertest.ServiceAccount(t, ns, "bob", "convoy-approver")
	waitApprovalPolicy(t, editor, ns)

	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	two := int32(2)
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.Approval = v1alpha1.ApprovalManual
		st.Spec.Approvals = &v1alpha1.Approvals{Required: &two}
		st.Spec.Interval = &metav1.Duration{Duration: time.Hour}
	}))
	startController(t, ns, nil)
	st := waitStack(t, c, ns, "shop", 60*time.Second, "ApprovalRequired", isCond("ApprovalRequired", metav1.ConditionTrue, "ApprovalRequired"))
	digest := st.Status.Plan.Digest

	// Lowering required is approving: refused to an editor.
	st = getStack(t, editor, ns, "shop")
	st.Spec.Approvals.Required = nil
	if err := editor.Update(ctx, st, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "may not approve") {
		t.Errorf("an editor lowering spec.approvals.required: %v", err)
	}

	a, err := ctl.ApprovePlan(ctx, alice, ctl.ApproveRequest{Namespace: ns, Name: "shop"})
	if err != nil || a.Complete || a.By != aliceName {
		t.Fatalf("alice's approval: %+v %v", a, err)
	}
	// The reconcile of the approved spec decides to wait.
	st = waitStack(t, c, ns, "shop", 60*time.Second, "waiting for a second approval", func(st *v1alpha1.Stack) bool {
		return isCond("ApprovalRequired", metav1.ConditionTrue, "ApprovalRequired")(st) && st.Status.Approval != nil && len(st.Status.Approval.ApprovedBy) == 1
	})
	if msg := cond(st, "Ready").Message; !strings.Contains(msg, "has 1 of 2 approvals ("+aliceName+")") {
		t.Errorf("Ready: %s", msg)
	}
	if st.Status.LastAppliedPlan != "" || configMessage(t, c, ns, "api") == "api-hello-v1" {
		t.Fatalf("applied with one approval of two:%s", describe(st))
	}
	var ae *ctl.ApproveError
	if _, err := ctl.Approve(ctx, alice, ns, "shop", ""); !errors.As(err, &ae) || !strings.Contains(err.Error(), aliceName+" approved plan "+digest+" already (1 of 2 approvals)") {
		t.Fatalf("alice approving twice: %v", err)
	}

	if a, err := ctl.ApprovePlan(ctx, bob, ctl.ApproveRequest{Namespace: ns, Name: "shop", Plan: digest}); err != nil || !a.Complete {
		t.Fatalf("bob's approval: %+v %v", a, err)
	}
	st = waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	both := []string{aliceName, bobName}
	slices.Sort(both)
	if la := st.Status.LastAppliedApproval; la == nil || la.Digest != digest || la.Required != 2 || !slices.Equal(la.ApprovedBy, both) {
		t.Fatalf("status.lastAppliedApproval %+v, want %v", la, both)
	}
	if h := helmHistory(t, ns, "web"); !strings.Contains(h, "approved by "+strings.Join(both, ", ")) {
		t.Errorf("helm history web does not say who approved:\n%s", h)
	}
}

// Approving a Pipeline's stage is the verb approve on pipelines: refused
// to an editor, and to an approver in another's name.
func TestPipelineApprovalIsAPermission(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	ctx := context.Background()
	editor, _ := controllertest.ServiceAccount(t, ns, "editor", "convoy-editor")
	approver, approverName := controllertest.ServiceAccount(t, ns, "approver", "convoy-approver")
	waitApprovalPolicy(t, editor, ns)
	create(t, c, &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: v1alpha1.PipelineSpec{
			Source: "oci://example.invalid/stacks/app",
			Follow: v1alpha1.Follow{Semver: ">=1.0.0"},
			Stages: []v1alpha1.Stage{{Name: "production", Stacks: v1alpha1.StackRefs("prod"), Approval: v1alpha1.ApprovalManual}},
		},
	})
	digest := "sha256:" + strings.Repeat("ab", 32)
	approve := func(cl client.Client, by string) error {
		var p v1alpha1.Pipeline
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, &p); err != nil {
			return err
		}
		orig := p.DeepCopy()
		p.Spec.Approvals = []v1alpha1.StageApproval{{Stage: "production", Digest: digest, ApprovedBy: by}}
		return cl.Patch(ctx, &p, client.MergeFrom(orig))
	}
	if err := approve(editor, "system:serviceaccount:"+ns+":editor"); err == nil || !strings.Contains(err.Error(), "may not approve convoy.dev/v1alpha1 Pipeline") {
		t.Errorf("a stage approval by an editor: %v", err)
	}
	if err := approve(approver, "alice"); err == nil || !strings.Contains(err.Error(), "may add only approvals of its own") {
		t.Errorf("a stage approval forged as alice: %v", err)
	}
	if err := approve(approver, approverName); err != nil {
		t.Fatalf("a stage approval by an approver, as itself: %v", err)
	}
	var p v1alpha1.Pipeline
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop"}, &p); err != nil {
		t.Fatal(err)
	}
	if a, ok := p.Spec.ApprovalFor("production", digest); !ok || a.ApprovedBy != approverName {
		t.Fatalf("spec.approvals %+v", p.Spec.Approvals)
	}
	// Turning the stage's approval off is approving too.
	p.Spec.Stages[0].Approval = v1alpha1.ApprovalAuto
	if err := editor.Update(ctx, &p, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "may not approve") {
		t.Errorf("an editor turning a stage's approval to auto: %v", err)
	}
}
