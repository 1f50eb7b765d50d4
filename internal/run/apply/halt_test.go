package apply_test

import (
	"context"
	"errors"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/run/apply"
	"github.com/convoy-sh/convoy/internal/run/apply/applytest"
	"github.com/convoy-sh/convoy/internal/stack/dag"
)

// Giving up on one cluster's API server halts that cluster's releases
// only: those not started end cancelled, not started; the stack's other
// clusters go on, as after any other failure (issue 54).
func TestGivingUpOnAClusterHaltsItsReleasesOnly(t *testing.T) {
	const dead, alive = kube.ClusterID("https://dead:6443"), kube.ClusterID("https://alive:6443")
	f := applytest.New()
	on := func(cluster kube.ClusterID, id string, deps ...string) *apply.Step {
		s := deploy(f, id, deps...)
		s.Cluster = cluster
		return s
	}
	// One at a time, in this order: db fails first, giving up on dead.
	steps := []*apply.Step{
		on(dead, "db"),
		on(dead, "cache"),
		on(alive, "api"),
		on(alive, "web", "api"),
	}
	gaveUp := &kube.UnreachableError{Outage: kube.Outage{Server: string(dead), Cause: errors.New("connection refused")}}
	f.Fail(applytest.OpExecute, ns, "db", gaveUp)
	res := start(t, context.Background(), steps, apply.ExecOptions{Parallelism: 1})()

	if r := res["db"]; r.Status != dag.Failed {
		t.Errorf("db: %s %v, want failed", r.Status, r.Err)
	}
	var notStarted *apply.NotStartedError
	if r := res["cache"]; r.Status != dag.Cancelled || !errors.As(r.Err, &notStarted) || notStarted.Outage.Server != string(dead) {
		t.Errorf("cache, on the cluster given up on: %s %v, want cancelled, not started", r.Status, r.Err)
	}
	for _, id := range []string{"api", "web"} {
		if r := res[id]; r.Status != dag.Succeeded {
			t.Errorf("%s, on another cluster: %s %v, want succeeded", id, r.Status, r.Err)
		}
	}
}
