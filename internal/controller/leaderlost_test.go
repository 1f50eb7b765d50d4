package controller_test

import (
	"context"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// A controller that loses its leadership mid-apply stops the apply before
// it exits: the release's revision is recorded failed (not left pending)
// and the stack lock is released, so its successor has nothing to heal.
func TestLeaderLostMidApplyLeavesNoPendingRecordNorLock(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	// api never gets Ready: the apply waits until the leadership is lost.
	dir := stackDir(t, ns, "v1", `set = { neverReady = true }
  timeout = "10m"`)
	push(t, reg, dir, "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", nil))

	o := controller.Options{MinInterval: testMinInterval,
		Kubeconfig: cluster.Kubeconfig(), Namespace: ns, CacheDir: t.TempDir(),
		MetricsAddress: "0", HealthAddress: "0", LeaderElectionNamespace: ns, Logger: logr.Discard(),
		LeaderElect: true, Identity: "leader-1", LeaseDuration: 4 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- controller.Run(ctx, o) }()
	t.Cleanup(func() { dropFinalizers(t, ns) })

	// The apply is under way: api's revision 1 is pending, under the
	// controller's stack lock.
	secrets := cluster.Client().CoreV1().Secrets(ns)
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		s, err := secrets.Get(ctx, "sh.helm.release.v1.api.v1", metav1.GetOptions{})
		return err == nil && s.Labels["status"] == string(release.StatusPendingInstall), nil
	})
	if err != nil {
		t.Fatalf("the controller never started applying api:%s", describe(getStack(t, c, ns, "shop")))
	}

	// Another process takes the leader election Lease.
	leases := cluster.Client().CoordinationV1().Leases(ns)
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := leases.Get(ctx, controller.LeaseName(""), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		usurper, now, hour := "usurper", metav1.NewMicroTime(time.Now()), int32(3600)
		l.Spec.HolderIdentity, l.Spec.RenewTime, l.Spec.AcquireTime, l.Spec.LeaseDurationSeconds = &usurper, &now, &now, &hour
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return err == nil, nil // a conflict with a renewal: again
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "leader election lost") {
			t.Fatalf("the controller returned %v, want the leadership lost", err)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("the controller did not stop after losing its leadership")
	}
	// As it exited: no stack lock left, no pending record.
	if _, err := cluster.Client().CoordinationV1().Leases(stacklock.Namespace).Get(context.Background(), stacklock.Name(ns), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the stack lock is left behind: %v", err)
	}
	s, err := secrets.Get(context.Background(), "sh.helm.release.v1.api.v1", metav1.GetOptions{})
	if err != nil || s.Labels["status"] != string(release.StatusFailed) {
		t.Fatalf("api revision 1: %v %v, want failed", s.Labels, err)
	}
	out, err := cluster.Helm(t, "history", "api", "-n", ns)
	if err != nil || !strings.Contains(out, "failed") {
		t.Fatalf("helm history api: %s %v", out, err)
	}
}
