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

// A plan waiting for approval keeps its digest across intervals while
// what it observed holds, so that the plan a person reviews does not move
// under them; once the cluster drifts, it is planned again.
func TestPendingPlanKeepsItsDigestUntilStale(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.Approval = v1alpha1.ApprovalManual
	}))
	startController(t, ns, nil)
	waitStack(t, c, ns, "shop", 60*time.Second, "ApprovalRequired", isCond("ApprovalRequired", metav1.ConditionTrue, ""))
	if _, err := ctl.Approve(context.Background(), c, ns, "shop", ""); err != nil {
		t.Fatal(err)
	}
	waitStack(t, c, ns, "shop", 60*time.Second, "applied", isCond("Ready", metav1.ConditionTrue, "Applied"))

	update(t, c, ns, "shop", func(st *v1alpha1.Stack) { st.Spec.Vars = map[string]string{"message": "two"} })
	st := waitStack(t, c, ns, "shop", 30*time.Second, "ApprovalRequired", isCond("ApprovalRequired", metav1.ConditionTrue, ""))
	pending := st.Status.Plan.Digest
	waitReconciles(t, c, ns, 2, "shop")
	if st = getStack(t, c, ns, "shop"); st.Status.Plan.Digest != pending {
		t.Fatalf("the pending plan moved without cause:%s", describe(st))
	}
	scale(t, ns, "web", 2)
	st = waitStack(t, c, ns, "shop", 15*time.Second, "planned again", func(st *v1alpha1.Stack) bool {
		return st.Status.Plan.Digest != pending && isCond("ApprovalRequired", metav1.ConditionTrue, "")(st)
	})
	if revisionsOf(st) != "api:1:deployed web:1:deployed" {
		t.Fatalf("applied without approval:%s", describe(st))
	}
}
