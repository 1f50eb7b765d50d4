package stack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Two Stacks of one stack (same source and vars: same stack, environment
// and clusters): the second never plans or applies, and says which Stack
// reconciles the stack; it takes over once the first is deleted.
func TestDuplicateStackNeverApplies(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	src := "oci://" + reg.Host + "/stacks/app:v1"
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "first", src, func(st *v1alpha1.Stack) { st.Spec.Prune = true }))
	create(t, c, newStack(ns, "second", src, nil))
	startController(t, ns, nil)

	waitStack(t, c, ns, "first", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	st := waitStack(t, c, ns, "second", 60*time.Second, "DuplicateStack", isCond("Stalled", metav1.ConditionTrue, "DuplicateStack"))
	if msg := cond(st, "Stalled").Message; !strings.Contains(msg, ns+"/first") {
		t.Errorf("the duplicate does not name the first Stack: %s", msg)
	}
	// Both looked again, a few times: still one revision, and the second
	// never planned.
	waitReconciles(t, c, ns, 3, "first")
	st = getStack(t, c, ns, "second")
	if r := cond(st, "Ready"); r.Status != metav1.ConditionFalse || r.Reason != "DuplicateStack" || st.Status.Plan != nil || st.Status.LastAppliedPlan != "" {
		t.Fatalf("the duplicate planned or is Ready:%s", describe(st))
	}
	for _, r := range helmRecords(t, ns) {
		if r.Labels["version"] != "1" {
			t.Errorf("release %s has revision %s: the duplicate applied", r.Labels["name"], r.Labels["version"])
		}
	}

	// The first goes (and uninstalls its releases): the second takes over.
	deleteStack(t, c, ns, "first")
	waitGone(t, c, ns, "first", time.Minute)
	st = waitStack(t, c, ns, "second", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if cond(st, "Stalled") != nil {
		t.Errorf("still stalled:%s", describe(st))
	}
}
