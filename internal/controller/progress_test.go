package controller_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The status says what the controller is doing while it does it, and what
// is true after: Reconciling=True with "applying N/M" while an apply runs,
// Ready no longer True for the previous plan (nor after the controller is
// killed in the middle); a failed apply stays in lastError, also while the
// next plan waits for approval, until an apply succeeds; the PLAN column
// (status.plan.summary) says what was applied, not what was to do.
func TestStatusDuringAndAfterApply(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	// v2: api never gets ready; its wait fails after 8s.
	push(t, reg, stackDir(t, ns, "v1", `set = { neverReady = true }
  timeout = "8s"`), "v2")
	src := "oci://" + reg.Host + "/stacks/app:"
	create(t, c, newStack(ns, "shop", src+"v1", nil))
	child := startProcess(t, controller.Options{MinInterval: testMinInterval,
		Kubeconfig: cluster.Kubeconfig(), Namespace: ns, CacheDir: t.TempDir(),
		MetricsAddress: "0", HealthAddress: "0", Identity: "first",
	})
	st := waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if st.Status.Plan.Summary != "applied: 2 installed" {
		t.Errorf("status.plan.summary %q after the apply, want %q", st.Status.Plan.Summary, "applied: 2 installed")
	}

	// While v2 applies: Reconciling=True with the apply's progress, and
	// Ready is not True.
	update(t, c, ns, "shop", func(st *v1alpha1.Stack) { st.Spec.Source = src + "v2" })
	st = waitStack(t, c, ns, "shop", 30*time.Second, "applying", func(st *v1alpha1.Stack) bool {
		r := cond(st, "Reconciling")
		return r != nil && r.Status == metav1.ConditionTrue && strings.Contains(r.Message, "running release.api")
	})
	if r := cond(st, "Reconciling"); !strings.Contains(r.Message, "applying plan sha256:") || !strings.Contains(r.Message, " releases done") {
		t.Errorf("Reconciling %q: want the plan and the count of releases", r.Message)
	}
	if r := cond(st, "Ready"); r.Status == metav1.ConditionTrue {
		t.Fatalf("Ready=True while applying:%s", describe(st))
	}

	// Killed in the middle: the Stack does not say Ready.
	if err := child.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.cmd.Wait()
	if st = getStack(t, c, ns, "shop"); cond(st, "Ready").Status == metav1.ConditionTrue {
		t.Fatalf("Ready=True after the controller died applying:%s", describe(st))
	}

	// Another controller finds the release the first left pending, applies
	// again, and fails: Ready=False, lastError names the release.
	startController(t, ns, nil)
	st = waitStack(t, c, ns, "shop", 90*time.Second, "ApplyFailed", isCond("Ready", metav1.ConditionFalse, "ApplyFailed"))
	if !strings.Contains(st.Status.LastError, "release.api") {
		t.Fatalf("lastError does not name the release:%s", describe(st))
	}

	// The next plan waits for approval: the failure is still shown.
	update(t, c, ns, "shop", func(st *v1alpha1.Stack) {
		st.Spec.Approval = v1alpha1.ApprovalManual
		st.Spec.Source = src + "v1"
	})
	st = waitStack(t, c, ns, "shop", 60*time.Second, "ApprovalRequired", isCond("ApprovalRequired", metav1.ConditionTrue, "ApprovalRequired"))
	if !strings.Contains(st.Status.LastError, "release.api") || st.Status.LastFailedPlan == "" || cond(st, "Ready").Status != metav1.ConditionFalse {
		t.Fatalf("the failed apply is no longer visible while the next plan waits:%s", describe(st))
	}

	// An apply that succeeds clears it.
	if _, err := ctl.Approve(context.Background(), c, ns, "shop", st.Status.Plan.Digest); err != nil {
		t.Fatal(err)
	}
	st = waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if st.Status.LastError != "" || st.Status.LastFailedPlan != "" || st.Status.Plan.Summary != "applied: 1 upgraded" {
		t.Fatalf("after a successful apply:%s\n  summary %q", describe(st), st.Status.Plan.Summary)
	}
	if r := cond(st, "Reconciling"); r != nil {
		t.Fatalf("Reconciling %s after the apply ended", r.Status)
	}
}
