package controller_test

import (
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// --shard a reconciles only the Stacks labelled convoy.dev/shard=a; a
// controller without --shard only those without the label.
func TestShardSelectsStacks(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	for _, name := range []string{"a", "b", "none"} {
		// One stack per Stack object: each has its own releases.
		push(t, reg, stackDir(t, ns+"-"+name, "v1", ""), name)
	}
	for _, name := range []string{"a", "b", "none"} {
		create(t, c, newStack(ns, name, "oci://"+reg.Host+"/stacks/app:"+name, func(st *v1alpha1.Stack) {
			// Plans only: nothing to install in namespaces that do not exist.
			st.Spec.Approval = v1alpha1.ApprovalManual
			if name != "none" {
				st.Labels = map[string]string{v1alpha1.ShardLabel: name}
			}
		}))
	}
	startController(t, ns, func(o *controller.Options) { o.Shard = "a" })
	waitStack(t, c, ns, "a", 60*time.Second, "planned", isCond("Planned", metav1.ConditionTrue, ""))
	// Listed and queued with a, b and none would have been reconciled
	// beside it (4 at once) by now.
	waitReconciles(t, c, ns, 2, "a")
	for _, name := range []string{"b", "none"} {
		if st := getStack(t, c, ns, name); len(st.Status.Conditions) > 0 {
			t.Fatalf("shard a reconciled Stack %s:%s", name, describe(st))
		}
	}
	startController(t, ns, nil)
	waitStack(t, c, ns, "none", 60*time.Second, "planned", isCond("Planned", metav1.ConditionTrue, ""))
	waitReconciles(t, c, ns, 2, "none")
	if st := getStack(t, c, ns, "b"); len(st.Status.Conditions) > 0 {
		t.Fatalf("Stack b reconciled without its shard:%s", describe(st))
	}
}
