package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/testfiles"
)

// An apply through a restart of its API server (SIGKILL, 10 s down, then
// started again with its data, devcluster.Restart) succeeds: the waits of
// two releases ride through the outage (refused connections, watches lost,
// a server still starting), which the run notices and announces, the lock
// is kept, the releases after them install once it answers again, and
// every release ends deployed, one revision each (issue 54, item 5).
func TestApplyThroughAPIServerRestart(t *testing.T) {
	own, err := devcluster.Start(context.Background(), devcluster.Options{Tools: devtest.Tools(t), Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Stop()

	// a waits 20 s for its pod, b 2 s, both across the restart; c and d
	// follow b (-p 2). The lock is renewed during the outage.
	chart := slowChart(t, "2s")
	dir := t.TempDir()
	testfiles.Write(t, dir, map[string]string{"stack.hcl": fmt.Sprintf(`stack "restart" {
  default_namespace = "restart"
}
release "a" {
  chart            = %[1]q
  create_namespace = true
  values           = [{ readyAfter = "20s" }]
}
release "b" {
  chart            = %[1]q
  create_namespace = true
}
release "c" {
  chart      = %[1]q
  depends_on = [release.b]
}
release "d" {
  chart      = %[1]q
  depends_on = [release.c]
}
`, chart)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The bound is above the outage (10 s down, then the API server's
	// start, 3–25 s on a loaded machine): what the test asks is that the
	// run retries through it, not how fast the server starts.
	done, out, errOut := startApply(ctx, "-C", dir, "--kubeconfig", own.Kubeconfig(), "-p", "2", "--unreachable-timeout", "60s")
	devtest.Eventually(t, 2*time.Minute, func() bool {
		return strings.Contains(errOut.String(), "release.a: waiting for") && strings.Contains(errOut.String(), "release.b: waiting for")
	}, func() string { return "the apply never waited for a and b:\n" + errOut.String() })
	killed := time.Now()
	if err := own.Restart(ctx, "kube-apiserver", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("the API server served again %s after its SIGKILL", time.Since(killed).Round(100*time.Millisecond))
	var code int
	select {
	case code = <-done:
	case <-time.After(3 * time.Minute):
		cancel()
		<-done
		t.Fatalf("the apply still runs 3 min after the restart:\n%s\n%s", out, errOut)
	}
	t.Logf("the apply exited %s after the SIGKILL:\n%s", time.Since(killed).Round(100*time.Millisecond), errOut)
	if code != 0 {
		t.Fatalf("exit %d through a 10 s API server restart:\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut.String(), "unreachable since") {
		t.Errorf("the run did not see the outage:\n%s", errOut)
	}
	eng, err := release.NewEngine(context.Background(), own.RESTConfig(), release.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		h, err := eng.Storage("restart").History(context.Background(), name)
		if err != nil || len(h) != 1 || h[0].Info.Status != release.StatusDeployed {
			var got []string
			for _, r := range h {
				got = append(got, fmt.Sprintf("%d %s", r.Version, r.Info.Status))
			}
			t.Errorf("release %s: history %v (%v), want revision 1 deployed", name, got, err)
		}
	}
}
