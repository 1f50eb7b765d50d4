package controller_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Changes made behind the controller's back, once its plans read the
// shared informers (an object deleted, another edited by another field
// manager), are seen by the next reconciles: the informers follow the
// cluster, and the releases they show changed are planned in full, with
// gets of their objects and no list request.
func TestDriftSeenThroughSharedInformers(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, fiveReleaseStack(t, ns), "v1")
	create(t, c, newStack(ns, "five", "oci://"+reg.Host+"/stacks/app:v1", nil))
	metrics := freeAddr(t)
	startController(t, ns, func(o *controller.Options) { o.MetricsAddress = metrics })
	waitStack(t, c, ns, "five", 90*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, ""))
	waitReconciles(t, c, ns, 3, "five") // past the apply's direct plan: the informers run
	_, req0 := counters(t, metrics)

	if err := cluster.Client().CoreV1().ConfigMaps(ns).Delete(context.Background(), "r0-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	scale(t, ns, "r1", 2)
	st := waitStack(t, c, ns, "five", 30*time.Second, "Drifted", isCond("Drifted", metav1.ConditionTrue, "Drifted"))
	_, req1 := counters(t, metrics)

	msg := cond(st, "Drifted").Message
	for _, want := range []string{"r0", "r1"} {
		if !strings.Contains(msg, "release."+want) {
			t.Errorf("Drifted %q does not name release.%s", msg, want)
		}
	}
	if !st.Status.Plan.DriftOnly || st.Status.Plan.Drifted != 2 {
		t.Errorf("status.plan: driftOnly %v, drifted %d, want the deleted ConfigMap and the scaled Deployment:%s", st.Status.Plan.DriftOnly, st.Status.Plan.Drifted, describe(st))
	}
	if d := req1["list"] - req0["list"]; d != 0 {
		t.Errorf("reconciles from warm informers to the drift seen made %v list requests, want 0", d)
	}
}
