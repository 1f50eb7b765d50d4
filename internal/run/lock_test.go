package run_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/run"
)

var cluster = devtest.New()

func TestMain(m *testing.M) { os.Exit(cluster.Run(m)) }

func TestStackLockIsExclusiveAndNamesItsHolder(t *testing.T) {
	ctx := context.Background()
	stack := "locktest-" + strings.ToLower(strings.ReplaceAll(cluster.Namespace(t), "t-", ""))
	first, err := run.Acquire(ctx, cluster.Client(), stack, "convoy apply")
	if err != nil {
		t.Fatal(err)
	}
	_, err = run.Acquire(ctx, cluster.Client(), stack, "convoy apply")
	var le *run.LockedError
	if !errors.As(err, &le) || le.Holder == "" || !strings.Contains(err.Error(), le.Holder) || le.Command != "convoy apply" {
		t.Fatalf("second acquire: %v", err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := run.Acquire(ctx, cluster.Client(), stack, "convoy destroy")
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	// force-unlock takes it away from a (presumed dead) holder.
	holder, err := run.ForceUnlockClient(ctx, cluster.Client(), stack)
	if err != nil || holder == "" {
		t.Fatalf("force-unlock: %q %v", holder, err)
	}
	if _, err := run.Acquire(ctx, cluster.Client(), stack, "convoy apply"); err != nil {
		t.Fatalf("acquire after force-unlock: %v", err)
	}
	_ = again.Release(ctx) // no longer ours: must not delete the new holder's lock
	if _, err := run.Acquire(ctx, cluster.Client(), stack, "convoy apply"); err == nil {
		t.Fatal("the old holder's Release deleted the new holder's lock")
	}
	_, _ = run.ForceUnlockClient(ctx, cluster.Client(), stack)
}

func TestLockNameIsAValidName(t *testing.T) {
	for _, s := range []string{"shop", "My Shop_2", strings.Repeat("x", 200), "!!!"} {
		n := run.LockName(s)
		if len(n) > 63 || strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" || strings.HasSuffix(n, "-") {
			t.Errorf("LockName(%q) = %q", s, n)
		}
	}
}
