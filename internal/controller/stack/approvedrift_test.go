package stack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// convoy approve on an auto Stack whose plan only restores drift
// (driftCorrection off) applies that plan: an explicit approval of one
// drift fix.
func TestApproveDriftFixOfAnAutoStack(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", nil))
	startController(t, ns, nil)
	waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, ""))

	scale(t, ns, "api", 3)
	st := waitStack(t, c, ns, "shop", 30*time.Second, "Drifted", isCond("Ready", metav1.ConditionFalse, "Drifted"))
	if msg := cond(st, "Ready").Message; !strings.Contains(msg, "convoy approve shop -n "+ns) {
		t.Errorf("the drift report does not say how to apply the fix: %s", msg)
	}
	digest, err := ctl.Approve(context.Background(), c, ns, "shop", st.Status.Plan.Digest)
	if err != nil {
		t.Fatal(err)
	}
	st = waitStack(t, c, ns, "shop", 30*time.Second, "corrected", isCond("Drifted", metav1.ConditionFalse, "DriftCorrected"))
	if n := replicas(t, c, ns, "api"); n != 1 || st.Status.LastAppliedPlan != digest || cond(st, "Ready").Status != metav1.ConditionTrue {
		t.Fatalf("after approving %s: replicas %d:%s", digest, n, describe(st))
	}

	// The approval was of that fix only: the next drift is reported again.
	scale(t, ns, "api", 4)
	waitStack(t, c, ns, "shop", 30*time.Second, "Drifted again", isCond("Ready", metav1.ConditionFalse, "Drifted"))
	waitReconciles(t, c, ns, 2, "shop")
	if n := replicas(t, c, ns, "api"); n != 4 {
		t.Fatalf("replicas %d: a later drift was corrected without approval", n)
	}
}
