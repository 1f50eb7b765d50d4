package stack_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/controller/stack"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// With approval auto, a pushed change a deny policy stops is not applied:
// the Stack is Ready=False with reason PolicyDenied naming the policy, the
// published plan shows it, and convoy approve --allow-policy applies
// exactly that plan, the override recorded in the release history.
func TestPolicyDenialIsNotAppliedEvenWithAutoApproval(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "live")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:live", nil))
	startController(t, ns, nil)
	waitStack(t, c, ns, "shop", 90*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, ""))

	dir := stackDir(t, ns, "v2", "")
	if err := os.WriteFile(filepath.Join(dir, "policies.hcl"), []byte(`
policy "freeze_api" {
  condition = "!(release.name == 'api' && release.action == 'upgrade')"
  message   = "api is frozen"
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	push(t, reg, dir, "live")
	st := waitStack(t, c, ns, "shop", 90*time.Second, "PolicyDenied", isCond("Ready", metav1.ConditionFalse, stack.ReasonPolicyDenied))
	if msg := cond(st, "Ready").Message; !strings.Contains(msg, "freeze_api") || !strings.Contains(msg, "--allow-policy freeze_api") {
		t.Fatalf("Ready message %q", msg)
	}
	if p := st.Status.Plan; p == nil || !slices.Equal(p.DeniedBy, []string{"freeze_api"}) {
		t.Fatalf("status.plan %+v", st.Status.Plan)
	}
	var cm corev1.ConfigMap
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: st.Status.Plan.ConfigMapRef.Name}, &cm); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cm.Data["plan.txt"], "policy freeze_api (deny): api is frozen") || !strings.Contains(cm.Data["plan.md"], "freeze_api") {
		t.Fatalf("the published plan does not show the denial:\n%s", cm.Data["plan.txt"])
	}
	// Reconciled again, still not applied.
	waitReconciles(t, c, ns, 1, "shop")
	if got := revisionsOf(getStack(t, c, ns, "shop")); got != "api:1:deployed web:1:deployed" {
		t.Fatalf("a denied plan was applied: %s", got)
	}

	// Approving needs an override of each denying policy, and only those.
	if _, err := ctl.ApproveWith(context.Background(), c, ns, "shop", "", nil); err == nil || !strings.Contains(err.Error(), "freeze_api") {
		t.Fatalf("approve without the override: %v", err)
	}
	if _, err := ctl.ApproveWith(context.Background(), c, ns, "shop", "", []string{"freeze_api", "other"}); err == nil {
		t.Fatal("approve with an override of a policy that does not deny the plan")
	}
	digest, err := ctl.ApproveWith(context.Background(), c, ns, "shop", "", []string{"freeze_api"})
	if err != nil {
		t.Fatal(err)
	}
	st = waitStack(t, c, ns, "shop", 90*time.Second, "applied", func(st *v1alpha1.Stack) bool {
		return st.Status.LastAppliedPlan == digest && isCond("Ready", metav1.ConditionTrue, "")(st)
	})
	if got := revisionsOf(st); got != "api:2:deployed web:2:deployed" {
		t.Fatalf("revisions %s%s", got, describe(st))
	}
	e, err := release.NewEngine(context.Background(), cluster.RESTConfig(), release.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := e.Storage(ns).History(context.Background(), "api")
	if err != nil {
		t.Fatal(err)
	}
	me, err := ctl.WhoAmI(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if d := h[len(h)-1].Info.Description; d != "Upgrade complete (policies allowed: freeze_api; approved by "+me+")" {
		t.Errorf("api's description %q", d)
	}
}
