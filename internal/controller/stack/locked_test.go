package stack_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/config"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// While a CLI apply runs (its releases pending, its lock held), the Stack
// says Locked, naming the run, not PlanFailed with advice to recover the
// release; once the run ends the Stack plans again.
func TestLockedWhileACLIApplyRuns(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	dir := stackDir(t, ns, "v1", `set = { neverReady = var.token == "slow" }
  timeout = "60s"`)
	push(t, reg, dir, "v1")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := runApply(ctx, run.Options{
			Source:   run.Source{Dir: dir, Variables: config.RawValues{config.VariableValue(config.ValueFromCLIArg, "--var", "token", "slow")}},
			Clusters: run.ClusterOptions{Kubeconfig: cluster.Kubeconfig()},
		}, run.ApplyRequest{Command: "convoy apply"})
		done <- err
	}()
	stop := sync.OnceValue(func() error { cancel(); return <-done })
	t.Cleanup(func() { _ = stop() })
	// The CLI run installs api and waits for it.
	var records int
	devtest.Eventually(t, 30*time.Second, func() bool {
		recs := helmRecords(t, ns)
		records = len(recs)
		return len(recs) == 1 && recs[0].Labels["status"] == "pending-install"
	}, func() string { return fmt.Sprintf("the CLI apply never got api pending: %d records", records) })

	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", nil))
	startController(t, ns, nil)
	st := waitStack(t, c, ns, "shop", 60*time.Second, "Locked", isCond("Ready", metav1.ConditionFalse, "Locked"))
	msg := cond(st, "Ready").Message
	t.Logf("Locked: %s", msg)
	if !strings.Contains(msg, "locked by") || !strings.Contains(msg, "(convoy apply, run") || strings.Contains(msg, "convoy recover") {
		t.Fatalf("the Locked condition does not name the CLI run: %s", msg)
	}

	_ = stop()
	waitStack(t, c, ns, "shop", 60*time.Second, "not Locked", func(st *v1alpha1.Stack) bool {
		r := cond(st, "Ready")
		return r != nil && r.Reason != "Locked"
	})
}
