package stack_test

import (
	"context"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Manual approval: nothing is applied until approvedPlan names the plan's
// digest; a wrong digest applies nothing; the right one applies exactly
// that plan; drift between approval and apply makes it stale, and the new
// plan waits for approval again.
func TestManualApproval(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.Approval = v1alpha1.ApprovalManual
		st.Spec.Interval = &metav1.Duration{Duration: time.Hour}
	}))
	startController(t, ns, nil)

	st := waitStack(t, c, ns, "shop", 60*time.Second, "ApprovalRequired", isCond("ApprovalRequired", metav1.ConditionTrue, "ApprovalRequired"))
	if cond(st, "Planned").Status != metav1.ConditionTrue || cond(st, "Ready").Status != metav1.ConditionFalse {
		t.Fatalf("waiting for approval:%s", describe(st))
	}
	planned := st.Status.Plan.Digest
	if m := configMessage(t, c, ns, "api"); m == "api-hello-v1" {
		t.Fatal("applied before approval")
	}

	// A wrong digest applies nothing. The status waited for is written by
	// the reconcile of the spec that names it (the condition's
	// observedGeneration), with what that reconcile applied; the hour's
	// interval schedules no other.
	wrong := "sha256:0000000000000000000000000000000000000000000000000000000000000000"
	update(t, c, ns, "shop", func(st *v1alpha1.Stack) { st.Spec.ApprovedPlan = wrong })
	st = waitStack(t, c, ns, "shop", 30*time.Second, "ApprovalMismatch", isCond("ApprovalRequired", metav1.ConditionTrue, "ApprovalMismatch"))
	if m := configMessage(t, c, ns, "api"); m == "api-hello-v1" || st.Status.LastAppliedPlan != "" {
		t.Fatalf("a wrong approvedPlan applied something:%s", describe(st))
	}
	if _, err := ctl.Approve(context.Background(), c, ns, "shop", wrong); err == nil {
		t.Fatal("convoy approve --plan with another digest succeeded")
	}

	// The right digest applies that very plan.
	d, err := ctl.Approve(context.Background(), c, ns, "shop", "")
	if err != nil || d != planned {
		t.Fatalf("approve: %s, %v (plan %s)", d, err, planned)
	}
	st = waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if st.Status.LastAppliedPlan != planned || revisionsOf(st) != "api:1:deployed web:1:deployed" {
		t.Fatalf("after approval:%s", describe(st))
	}
	if m := configMessage(t, c, ns, "api"); m != "api-hello-v1" {
		t.Fatalf("api message %q", m)
	}

	// A new plan, approved while the controller is suspended; then the
	// cluster drifts: the approved plan is stale, nothing is applied, and
	// the new plan waits for approval.
	update(t, c, ns, "shop", func(st *v1alpha1.Stack) { st.Spec.Vars = map[string]string{"message": "two"} })
	st = waitStack(t, c, ns, "shop", 60*time.Second, "ApprovalRequired", func(st *v1alpha1.Stack) bool {
		return isCond("ApprovalRequired", metav1.ConditionTrue, "")(st) && st.Status.Plan.Digest != planned
	})
	second := st.Status.Plan.Digest
	update(t, c, ns, "shop", func(st *v1alpha1.Stack) { st.Spec.Suspend = true })
	waitStack(t, c, ns, "shop", 30*time.Second, "suspended", isCond("Ready", metav1.ConditionFalse, "Suspended"))
	if _, err := ctl.Approve(context.Background(), c, ns, "shop", second); err != nil {
		t.Fatal(err)
	}
	scale(t, ns, "api", 3)
	update(t, c, ns, "shop", func(st *v1alpha1.Stack) { st.Spec.Suspend = false })
	st = waitStack(t, c, ns, "shop", 60*time.Second, "re-planned", func(st *v1alpha1.Stack) bool {
		return isCond("ApprovalRequired", metav1.ConditionTrue, "")(st) && st.Status.Plan.Digest != second
	})
	if st.Status.LastAppliedPlan != planned || revisionsOf(st) != "api:1:deployed web:1:deployed" {
		t.Fatalf("a stale plan was applied:%s", describe(st))
	}
	if m := configMessage(t, c, ns, "api"); m != "api-hello-v1" {
		t.Fatalf("api message %q after a stale approval", m)
	}
	if n := replicas(t, c, ns, "api"); n != 3 {
		t.Fatalf("replicas %d: the stale plan touched the Deployment", n)
	}
}
