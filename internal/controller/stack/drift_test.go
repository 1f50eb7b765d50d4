package stack_test

import (
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectl scale between changes: Drifted within one interval and left
// alone without driftCorrection; restored with it.
func TestDriftReportedThenCorrected(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", nil))
	startController(t, ns, nil)
	waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, ""))

	scale(t, ns, "api", 3)
	st := waitStack(t, c, ns, "shop", 15*time.Second, "Drifted", isCond("Drifted", metav1.ConditionTrue, "Drifted"))
	if !st.Status.Plan.DriftOnly || revisionsOf(st) != "api:1:deployed web:1:deployed" {
		t.Fatalf("drifted:%s", describe(st))
	}
	// One scaled Deployment is one drifted object, named once.
	if msg := cond(st, "Drifted").Message; st.Status.Plan.Drifted != 1 || strings.Count(msg, "release.api") != 1 {
		t.Fatalf("status.plan.drifted %d, Drifted %q: want the one Deployment, once", st.Status.Plan.Drifted, msg)
	}
	waitReconciles(t, c, ns, 2, "shop")
	if n := replicas(t, c, ns, "api"); n != 3 {
		t.Fatalf("replicas %d: drift was corrected without driftCorrection", n)
	}
	st = getStack(t, c, ns, "shop")
	if c := cond(st, "Ready"); c.Status != metav1.ConditionFalse || c.Reason != "Drifted" {
		t.Fatalf("Ready while drifted:%s", describe(st))
	}

	update(t, c, ns, "shop", func(st *v1alpha1.Stack) { st.Spec.DriftCorrection = true })
	st = waitStack(t, c, ns, "shop", 30*time.Second, "corrected", isCond("Drifted", metav1.ConditionFalse, "DriftCorrected"))
	if n := replicas(t, c, ns, "api"); n != 1 {
		t.Fatalf("replicas %d after drift correction", n)
	}
	if revisionsOf(st) != "api:2:deployed web:1:deployed" || cond(st, "Ready").Status != metav1.ConditionTrue {
		t.Fatalf("after correction:%s", describe(st))
	}

	// Corrected again on its own, within an interval.
	scale(t, ns, "api", 4)
	waitStack(t, c, ns, "shop", 15*time.Second, "corrected again", func(st *v1alpha1.Stack) bool {
		return revisionsOf(st) == "api:3:deployed web:1:deployed"
	})
	if n := replicas(t, c, ns, "api"); n != 1 {
		t.Fatalf("replicas %d after the second correction", n)
	}
}
