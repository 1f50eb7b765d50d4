package run_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var cluster = devtest.New()

func TestMain(m *testing.M) { os.Exit(cluster.Run(m)) }

func TestStackLockIsExclusiveAndNamesItsHolder(t *testing.T) {
	ctx := context.Background()
	stack := "locktest-" + strings.ToLower(strings.ReplaceAll(cluster.Namespace(t), "t-", ""))
	first, err := stacklock.Acquire(ctx, cluster.Client(), stack, stacklock.Options{Command: "convoy apply"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stacklock.Acquire(ctx, cluster.Client(), stack, stacklock.Options{Command: "convoy apply"})
	var le *stacklock.HeldError
	if !errors.As(err, &le) || le.Holder == "" || !strings.Contains(err.Error(), le.Holder) || le.Command != "convoy apply" {
		t.Fatalf("second acquire: %v", err)
	}
	if err := first.Release(ctx, 0); err != nil {
		t.Fatal(err)
	}
	again, err := stacklock.Acquire(ctx, cluster.Client(), stack, stacklock.Options{Command: "convoy destroy"})
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	// force-unlock takes it away from a (presumed dead) holder.
	holder, err := stacklock.ForceUnlock(ctx, cluster.Client(), stack, "", true)
	if err != nil || holder == "" {
		t.Fatalf("force-unlock: %q %v", holder, err)
	}
	if _, err := stacklock.Acquire(ctx, cluster.Client(), stack, stacklock.Options{Command: "convoy apply"}); err != nil {
		t.Fatalf("acquire after force-unlock: %v", err)
	}
	_ = again.Release(ctx, 0) // no longer ours: must not delete the new holder's lock
	if _, err := stacklock.Acquire(ctx, cluster.Client(), stack, stacklock.Options{Command: "convoy apply"}); err == nil {
		t.Fatal("the old holder's Release deleted the new holder's lock")
	}
	_, _ = stacklock.ForceUnlock(ctx, cluster.Client(), stack, "", true)
}

func TestLockNameIsAValidName(t *testing.T) {
	for _, s := range []string{"shop", "My Shop_2", strings.Repeat("x", 200), "!!!"} {
		n := stacklock.Name(s)
		if len(n) > 63 || strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" || strings.HasSuffix(n, "-") {
			t.Errorf("LockName(%q) = %q", s, n)
		}
	}
}

// holdLock takes the stack's lock as a run that then dies, and edits its
// Lease into the shape a dead holder leaves behind.
func holdLock(t *testing.T, stack string, edit func(*coordinationv1.Lease)) string {
	t.Helper()
	ctx := context.Background()
	l, err := stacklock.Acquire(ctx, cluster.Client(), stack, stacklock.Options{Command: "convoy apply"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = stacklock.ForceUnlock(ctx, cluster.Client(), stack, "", true) })
	leases := cluster.Client().CoordinationV1().Leases(stacklock.Namespace)
	cur, err := leases.Get(ctx, stacklock.Name(stack), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	edit(cur)
	if _, err := leases.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return l.ID()
}

// deadPid is the pid of a process that has ended.
func deadPid(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestLockOfADeadProcessOnThisHostIsTakenOverAtOnce(t *testing.T) {
	stack := "dead-" + strings.TrimPrefix(cluster.Namespace(t), "t-")
	pid := deadPid(t)
	old := holdLock(t, stack, func(l *coordinationv1.Lease) {
		l.Annotations["convoy.dev/pid"] = strconv.Itoa(pid)
		holder := fmt.Sprintf("root@%s pid %d", l.Annotations["convoy.dev/host"], pid)
		l.Spec.HolderIdentity = &holder
	})
	var said []string
	start := time.Now()
	l, err := stacklock.Acquire(context.Background(), cluster.Client(), stack, stacklock.Options{Command: "convoy apply", Announce: func(s string) { said = append(said, s) }})
	if err != nil {
		t.Fatalf("the lock of a dead process was not taken over: %v", err)
	}
	defer l.Release(context.Background(), 0)
	if time.Since(start) > 5*time.Second || len(said) != 1 || !strings.Contains(said[0], fmt.Sprintf("pid %d", pid)) ||
		!strings.Contains(said[0], "run "+old) || !strings.Contains(said[0], "no longer exists on this host") {
		t.Fatalf("announced %q after %s", said, time.Since(start))
	}
}

func TestExpiredLockElsewhereIsTakenOverAndALiveOneIsNot(t *testing.T) {
	stack := "expired-" + strings.TrimPrefix(cluster.Namespace(t), "t-")
	elsewhere := func(renewed time.Duration) func(*coordinationv1.Lease) {
		return func(l *coordinationv1.Lease) {
			l.Annotations["convoy.dev/host"] = "build-7"
			holder := "ci@build-7 pid 4242"
			l.Spec.HolderIdentity = &holder
			at := metav1.NewMicroTime(time.Now().Add(-renewed))
			l.Spec.RenewTime = &at
		}
	}
	// Renewed 12s ago: alive, whatever its pid says on this host.
	id := holdLock(t, stack, elsewhere(12*time.Second))
	_, err := stacklock.Acquire(context.Background(), cluster.Client(), stack, stacklock.Options{Command: "convoy rollback"})
	var le *stacklock.HeldError
	if !errors.As(err, &le) || le.LockID != id {
		t.Fatalf("a live holder elsewhere: %v", err)
	}
	for _, want := range []string{"ci@build-7 pid 4242", "last renewed 12s ago", "If that run is gone: convoy force-unlock " + id} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	// force-unlock with another id leaves it alone.
	if _, err := stacklock.ForceUnlock(context.Background(), cluster.Client(), stack, "0123456789ab", true); err == nil || !strings.Contains(err.Error(), "left alone") {
		t.Fatalf("force-unlock of another id: %v", err)
	}

	// Not renewed for longer than the lock's duration: expired.
	_, _ = stacklock.ForceUnlock(context.Background(), cluster.Client(), stack, id, true)
	holdLock(t, stack, elsewhere(stacklock.Duration+15*time.Second))
	var said []string
	l, err := stacklock.Acquire(context.Background(), cluster.Client(), stack, stacklock.Options{Command: "convoy apply", Announce: func(s string) { said = append(said, s) }})
	if err != nil {
		t.Fatalf("an expired lock was not taken over: %v", err)
	}
	defer l.Release(context.Background(), 0)
	if len(said) != 1 || !strings.Contains(said[0], "ci@build-7 pid 4242") || !strings.Contains(said[0], "has not renewed the lock for 45s") {
		t.Fatalf("announced %q", said)
	}
}
