package stack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A failed apply is tried again (counted in status.failures), then the
// Stack stalls; a new generation (here: a fixed variable) starts again.
func TestFailedApplyRetriedThenStalled(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	// api never gets Ready while var.token is "broken": its wait fails.
	push(t, reg, stackDir(t, ns, "v1", `set = { neverReady = var.token == "broken" }
  timeout = "2s"`), "v1")
	attempts := int32(2)
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.Vars = map[string]string{"token": "broken"}
		st.Spec.Retry = &v1alpha1.RetrySpec{Attempts: &attempts, Backoff: &metav1.Duration{Duration: time.Second}}
	}))
	startController(t, ns, nil)

	st := waitStack(t, c, ns, "shop", 60*time.Second, "retrying", func(st *v1alpha1.Stack) bool {
		c := cond(st, "Reconciling")
		return st.Status.Failures >= 1 && c != nil && c.Reason == "ApplyFailed"
	})
	if msg := cond(st, "Reconciling").Message; !strings.Contains(msg, "failed (attempt") || !strings.Contains(msg, "release.api") {
		t.Errorf("retrying: %s", msg)
	}
	st = waitStack(t, c, ns, "shop", 90*time.Second, "Stalled", isCond("Stalled", metav1.ConditionTrue, "ApplyFailed"))
	t.Logf("stalled: %s", cond(st, "Stalled").Message)
	if st.Status.Failures != 3 || cond(st, "Ready").Status != metav1.ConditionFalse || !strings.Contains(cond(st, "Stalled").Message, "failed 3 times") {
		t.Fatalf("after 1 + %d attempts:%s\n  failures %d", attempts, describe(st), st.Status.Failures)
	}
	var apiRevisions int
	for _, r := range helmRecords(t, ns) {
		if r.Labels["name"] == "api" {
			apiRevisions++
		}
	}
	if apiRevisions != 3 {
		t.Errorf("api has %d revisions after 3 failed applies", apiRevisions)
	}

	update(t, c, ns, "shop", func(st *v1alpha1.Stack) { st.Spec.Vars["token"] = "fixed" })
	st = waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	// One apply after the stall: no retry ran meanwhile.
	if st.Status.Failures != 0 || cond(st, "Stalled") != nil || !strings.HasPrefix(revisionsOf(st), "api:4:deployed") {
		t.Fatalf("after the fix:%s\n  failures %d", describe(st), st.Status.Failures)
	}
}

// spec.atomic rolls back the releases of a failed apply, as convoy apply
// --atomic does.
func TestAtomicRollsBackAFailedApply(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", `set = { neverReady = var.token == "broken" }
  timeout = "2s"`), "v1")
	never := int32(0)
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.Atomic = true
		st.Spec.Retry = &v1alpha1.RetrySpec{Attempts: &never}
	}))
	startController(t, ns, nil)
	waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))

	update(t, c, ns, "shop", func(st *v1alpha1.Stack) { st.Spec.Vars = map[string]string{"token": "broken"} })
	st := waitStack(t, c, ns, "shop", 60*time.Second, "Stalled", isCond("Stalled", metav1.ConditionTrue, "ApplyFailed"))
	if msg := cond(st, "Stalled").Message; !strings.Contains(msg, "release.api: restored (atomic) as revision 3") || st.Status.Failures != 1 {
		t.Fatalf("not rolled back:%s", describe(st))
	}
	// Revision 2 failed, revision 3 is revision 1 again.
	statuses := map[string]string{}
	for _, r := range helmRecords(t, ns) {
		if r.Labels["name"] == "api" {
			statuses[r.Labels["version"]] = r.Labels["status"]
		}
	}
	if statuses["2"] != "failed" || statuses["3"] != "deployed" {
		t.Errorf("api's records after an atomic apply failed: %v", statuses)
	}
}
