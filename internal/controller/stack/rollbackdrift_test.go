package stack_test

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A Stack pinned back to the digest it ran before a failed apply (as a
// Pipeline's rollback pins it) applies the rollback's plan, which finds
// the failed revision's objects different from the deployed revision: once
// applied, the Stack is Ready and not Drifted, and no Drifted notification
// is sent for the rollback's own plan.
func TestRollbackPlanIsNotReportedAsDrift(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	good := push(t, reg, stackDir(t, ns, "v1", ""), "good")
	bad := push(t, reg, stackDir(t, ns, "v2", `set = { neverReady = true }
  timeout = "4s"`), "bad")
	h := &hook{}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	repo := "oci://" + reg.Host + "/stacks/app@"
	create(t, c, newStack(ns, "shop", repo+good, func(st *v1alpha1.Stack) {
		// No plan at the interval: what the test sees is the rollback's.
		st.Spec.Interval = &metav1.Duration{Duration: 10 * time.Minute}
		st.Spec.Notifications = []v1alpha1.Notification{{URL: srv.URL}}
	}))
	startController(t, ns, nil)
	appliedOn := func(digest string) func(*v1alpha1.Stack) bool {
		return func(st *v1alpha1.Stack) bool {
			return isCond("Ready", metav1.ConditionTrue, "Applied")(st) && st.Status.Source != nil && st.Status.Source.Digest == digest &&
				st.Status.Plan != nil && st.Status.LastAppliedPlan == st.Status.Plan.Digest
		}
	}
	waitStack(t, c, ns, "shop", 90*time.Second, "applied on the good digest", appliedOn(good))

	update(t, c, ns, "shop", func(st *v1alpha1.Stack) { st.Spec.Source = repo + bad })
	waitStack(t, c, ns, "shop", 90*time.Second, "failed on the bad digest", func(st *v1alpha1.Stack) bool {
		return st.Status.Source != nil && st.Status.Source.Digest == bad && st.Status.LastFailedPlan != "" && st.Status.ObservedGeneration == st.Generation
	})

	update(t, c, ns, "shop", func(st *v1alpha1.Stack) { st.Spec.Source = repo + good })
	st := waitStack(t, c, ns, "shop", 90*time.Second, "applied on the good digest again", appliedOn(good))
	rollback := st.Status.Plan.Digest
	if d := cond(st, "Drifted"); d != nil && d.Status == metav1.ConditionTrue {
		t.Errorf("Ready=True Applied and Drifted=True after the rollback's own plan:%s", describe(st))
	}
	// The notices a reconcile sends are recorded in status.notified
	// with its status; they are sent after it, in any order.
	if hasNotified(st, "Drifted", rollback) {
		t.Errorf("a Drifted notification is sent for the rollback's own plan %s", rollback)
	}
	devtest.Eventually(t, 30*time.Second, func() bool {
		var applied, drifted bool
		for _, doc := range h.Received() {
			p, _ := doc["plan"].(map[string]any)
			if p == nil || p["digest"] != rollback {
				continue
			}
			applied = applied || doc["event"] == "Applied"
			drifted = drifted || doc["event"] == "Drifted"
		}
		if drifted {
			t.Fatalf("a Drifted notification was sent for the rollback's own plan %s:%s", rollback, describe(st))
		}
		return applied
	}, func() string {
		return fmt.Sprintf("no Applied notification for the rollback's plan %s: %v", rollback, h.Received())
	})
}
