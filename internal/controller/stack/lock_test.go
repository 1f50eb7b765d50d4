package stack_test

import (
	"context"
	"errors"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/run"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A CLI apply and the controller never run one stack at once: the
// controller waits for a CLI run's lock, naming it; a CLI apply during
// the controller's fails naming the controller.
func TestCLIApplyAndControllerShareTheStackLock(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	// api never gets Ready: the controller's apply holds the lock until
	// the wait times out.
	dir := stackDir(t, ns, "v1", `set = { neverReady = true }
  timeout = "12s"`)
	push(t, reg, dir, "v1")

	ctx := context.Background()
	lock, err := stacklock.Acquire(ctx, cluster.Client(), ns, stacklock.Options{Command: "convoy apply"})
	if err != nil {
		t.Fatal(err)
	}
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", nil))
	startController(t, ns, nil)
	st := waitStack(t, c, ns, "shop", 60*time.Second, "Locked", isCond("Ready", metav1.ConditionFalse, "Locked"))
	if msg := cond(st, "Ready").Message; !strings.Contains(msg, "convoy apply") || !strings.Contains(msg, "locked by") {
		t.Fatalf("the Locked condition does not name the CLI run: %s", msg)
	}
	if len(st.Status.Releases) != 0 || st.Status.LastAppliedPlan != "" {
		t.Fatalf("applied while the CLI held the lock:%s", describe(st))
	}
	if err := lock.Release(ctx, 0); err != nil {
		t.Fatal(err)
	}

	// The controller takes the lock and applies (api's wait runs 12s);
	// a CLI apply meanwhile fails naming it.
	leases := cluster.Client().CoordinationV1().Leases(stacklock.Namespace)
	devtest.Eventually(t, 30*time.Second, func() bool {
		l, err := leases.Get(ctx, stacklock.Name(ns), metav1.GetOptions{})
		return err == nil && strings.Contains(l.Annotations["convoy.dev/command"], "convoy controller")
	}, func() string { return "the controller never took the lock:" + describe(getStack(t, c, ns, "shop")) })
	_, err = runApply(ctx, run.Options{Source: run.Source{Dir: dir}, Clusters: run.ClusterOptions{Kubeconfig: cluster.Kubeconfig()}},
		run.ApplyRequest{Command: "convoy apply"})
	var le *stacklock.HeldError
	if !errors.As(err, &le) || !strings.Contains(le.Error(), "convoy controller (Stack "+ns+"/shop)") {
		t.Fatalf("a CLI apply during the controller's: %v", err)
	}
}
