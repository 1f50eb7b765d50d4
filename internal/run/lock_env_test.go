package run_test

import (
	"context"
	"errors"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStackLockNamesTheEnvironment: each environment of a stack has its own
// lock, whose Lease and whose "locked" error name the environment.
func TestStackLockNamesTheEnvironment(t *testing.T) {
	ctx := context.Background()
	stack := "lockenv-" + strings.ToLower(strings.ReplaceAll(cluster.Namespace(t), "t-", ""))
	prod, err := stacklock.Acquire(ctx, cluster.Client(), stack+".prod", stacklock.Options{Command: "convoy apply", Environment: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Release(ctx, stacklock.DefaultGrace)
	lease, err := cluster.Client().CoordinationV1().Leases(stacklock.Namespace).Get(ctx, stacklock.Name(stack+".prod"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lease.Annotations["convoy.dev/environment"] != "prod" {
		t.Errorf("annotations %v", lease.Annotations)
	}
	_, err = stacklock.Acquire(ctx, cluster.Client(), stack+".prod", stacklock.Options{Command: "convoy apply", Environment: "prod"})
	var le *stacklock.HeldError
	if !errors.As(err, &le) || le.Environment != "prod" || !strings.Contains(err.Error(), `(environment "prod") is locked`) {
		t.Fatalf("second acquire: %v", err)
	}
	staging, err := stacklock.Acquire(ctx, cluster.Client(), stack+".staging", stacklock.Options{Command: "convoy apply", Environment: "staging"})
	if err != nil {
		t.Fatalf("another environment's lock: %v", err)
	}
	_ = staging.Release(ctx, stacklock.DefaultGrace)
}
