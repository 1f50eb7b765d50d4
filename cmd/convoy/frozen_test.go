package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/testfiles"
)

// An API server frozen (SIGSTOP: it refuses nothing, it answers nothing)
// while a release waits is noticed within the clients' bound, given up on
// at the time the run announced, after --unreachable-timeout; no release
// starts after that, and the run names those it did not start. The apply
// exits within 75 s of the freeze (issue 54, item 4: it took 204 s, 45 s
// to notice, and started 15 more releases).
func TestFrozenAPIServerIsGivenUpOnInTime(t *testing.T) {
	own, err := devcluster.Start(context.Background(), devcluster.Options{Tools: devtest.Tools(t), Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Stop()
	apiserver := own.Pids()["kube-apiserver"]
	frozen := false
	resume := func() {
		if frozen {
			_ = syscall.Kill(apiserver, syscall.SIGCONT)
			frozen = false
		}
	}
	defer resume()

	// a-wait never gets ready (its timeout is 10m); b-later and c-later
	// come after it (-p 1).
	chart := neverReadyChart(t)
	dir := t.TempDir()
	testfiles.Write(t, dir, map[string]string{"stack.hcl": fmt.Sprintf(`stack "frozen" {
  default_namespace = "frozen"
}
release "a-wait" {
  chart            = %[1]q
  create_namespace = true
  wait             = true
  timeout          = "10m"
}
release "b-later" {
  chart            = %[1]q
  create_namespace = true
  values           = [{ ready = true }]
}
release "c-later" {
  chart            = %[1]q
  create_namespace = true
  values           = [{ ready = true }]
}
`, chart)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, out, errOut := startApply(ctx, "-C", dir, "--kubeconfig", own.Kubeconfig(), "-p", "1", "--unreachable-timeout", "30s")
	devtest.Eventually(t, 2*time.Minute, func() bool { return strings.Contains(errOut.String(), "waiting for 2 objects to be ready") },
		func() string { return "the apply never waited for its 2 objects:\n" + errOut.String() })
	time.Sleep(time.Second) // into the wait
	if err := syscall.Kill(apiserver, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen = true
	freeze := time.Now()

	// The line view says when it noticed, and when it will give up.
	var noticed time.Time
	var code int
	bound := 75 * time.Second
	deadline := time.After(bound)
	notice := regexp.MustCompile(`unreachable since \S+ \(.*\); giving up at (\d\d:\d\d:\d\d)`)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case code = <-done:
			break wait
		case <-deadline:
			resume()
			cancel()
			<-done
			t.Fatalf("still running %s after the API server froze (--unreachable-timeout 30s):\n%s\n%s", bound, out, errOut)
		case <-tick.C:
			if noticed.IsZero() && notice.MatchString(errOut.String()) {
				noticed = time.Now()
			}
		}
	}
	exited := time.Now()
	resume()
	m := notice.FindStringSubmatch(errOut.String())
	if code != 1 || m == nil || noticed.IsZero() {
		t.Fatalf("exit %d; the outage was not announced with its give-up time:\n%s\n%s", code, out, errOut)
	}
	announced, err := time.ParseInLocation(time.TimeOnly, m[1], time.Local)
	if err != nil {
		t.Fatal(err)
	}
	y, mo, d := freeze.Date()
	announced = time.Date(y, mo, d, announced.Hour(), announced.Minute(), announced.Second(), 0, time.Local)
	t.Logf("noticed %s after the freeze; announced giving up at %s (%s after the freeze); exited %s after the freeze, %s after the announced time",
		noticed.Sub(freeze).Round(100*time.Millisecond), m[1], announced.Sub(freeze).Round(time.Second),
		exited.Sub(freeze).Round(100*time.Millisecond), exited.Sub(announced).Round(100*time.Millisecond))

	// Nothing started after giving up: b-later and c-later have no
	// record, and the result names them not started.
	for _, name := range []string{"b-later", "c-later"} {
		if !regexp.MustCompile(`(?m)^` + name + `\s+frozen\s+install\s+-\s+cancelled\s`).MatchString(out.String()) {
			t.Errorf("%s is not reported cancelled:\n%s", name, out)
		}
		if !strings.Contains(out.String(), fmt.Sprintf("release.%s (frozen/%s): not started: the run gave up on API server ", name, name)) {
			t.Errorf("%s is not named as not started:\n%s", name, out)
		}
	}
	if strings.Contains(errOut.String(), "b-later: rendering") || strings.Contains(errOut.String(), "c-later: rendering") {
		t.Errorf("a release started after the run gave up:\n%s", errOut)
	}
}
