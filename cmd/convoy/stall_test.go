package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/run"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestStalledAPIServerLeavesAnHonestSummary stops the API server (SIGSTOP)
// while a release waits, past the release's timeout, so that recording the
// failure meets a server that does not answer. Resumed within the grace
// period, the failure is recorded, the summary says the same, and the lock
// is released. Resumed only after it, the summary says what the record
// still says and gives the one command that fixes the lock, and the next
// apply converges.
func TestStalledAPIServerLeavesAnHonestSummary(t *testing.T) {
	tools := devtest.Tools(t)
	own, err := devcluster.Start(context.Background(), devcluster.Options{Tools: tools, Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Stop()
	apiserver := own.Pids()["kube-apiserver"]
	stopped := false
	resume := func() {
		if stopped {
			_ = syscall.Kill(apiserver, syscall.SIGCONT)
			stopped = false
		}
	}
	defer resume()
	eng, err := release.NewEngine(context.Background(), own.RESTConfig(), release.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client := eng.Client()
	chart := slowChart(t, "6s") // ready after the timeout: the first wait fails
	const ns = "stall"

	// apply runs convoy apply in-process against the stoppable cluster; it
	// stops the API server once the release waits, and resumes it after
	// resumeAfter, or when the run is over (resumeAfter 0).
	apply := func(name string, grace, resumeAfter time.Duration) (int, string, string) {
		t.Helper()
		dir := writeStack(t, fmt.Sprintf("stack \"stall-%[3]s\" {\n  default_namespace = %[2]q\n}\nrelease %[3]q {\n  chart            = %[1]q\n  create_namespace = true\n  timeout          = \"4s\"\n}\n", chart, ns, name))
		o := applyOptions{AutoApprove: true, NoProgress: true}
		o.Stack = stackFlags{Dir: dir}
		o.Cluster = clusterFlags{Kubeconfig: own.Kubeconfig(), QPS: run.DefaultQPS, Burst: run.DefaultBurst}
		o.Parallelism, o.Grace = 1, grace
		var out, errb bytes.Buffer
		done := make(chan int)
		go func() {
			done <- exitCode(o.Run(context.Background(), streams{In: strings.NewReader(""), Out: &out, Err: &errb}), &errb)
		}()
		devtest.Eventually(t, 60*time.Second, func() bool {
			h, err := eng.Storage(ns).History(context.Background(), name)
			return err == nil && len(h) == 1 && h[0].Info.Status == release.StatusPendingInstall
		}, func() string { return "the apply never recorded its pending revision" })
		time.Sleep(500 * time.Millisecond) // into the wait
		if err := syscall.Kill(apiserver, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stopped = true
		var code int
		if resumeAfter > 0 {
			time.Sleep(resumeAfter)
			resume()
			code = <-done
		} else {
			select {
			case code = <-done:
			case <-time.After(60 * time.Second):
				resume()
				t.Fatal("the run did not end while the API server was stopped")
			}
			resume()
		}
		return code, out.String(), errb.String()
	}

	// Resumed within the grace period: the record and the summary say
	// failed, and the lock is released.
	code, out, errOut := apply("within", 0, 11*time.Second)
	h := storedHistory(t, eng, ns, "within")
	if code != 1 || !regexp.MustCompile(`(?m)^within\s+stall\s+install\s+1\s+failed\s`).MatchString(out) || revisions(h) != "1:failed" {
		t.Fatalf("resumed within the grace period: exit %d, record %s\n%s\n%s", code, revisions(h), out, errOut)
	}
	if leaseExists(t, client, "stall-within") {
		t.Fatalf("the lock was not released:\n%s", errOut)
	}

	// Resumed only after the grace period: the summary says what the
	// record says and what fixes it, and how to release the lock.
	code, out, errOut = apply("after", 2*time.Second, 0)
	h = storedHistory(t, eng, ns, "after")
	if code != 1 || !regexp.MustCompile(`(?m)^after\s+stall\s+install\s+1\s+pending-install\s`).MatchString(out) ||
		!strings.Contains(out, "could not be recorded as failed") || !strings.Contains(out, "its record says pending-install, unless a write arrives late") ||
		!strings.Contains(out, "the next `convoy apply` of its stack marks it failed") {
		t.Fatalf("resumed after the grace period: exit %d, record %s\n%s\n%s", code, revisions(h), out, errOut)
	}
	// The record is what the summary said, or what it said a late write
	// would make it.
	if got := revisions(h); got != "1:pending-install" && got != "1:failed" {
		t.Fatalf("the record says %s; the summary said pending-install (or failed, written late)", got)
	}
	id := regexp.MustCompile("convoy force-unlock ([0-9a-f]+)").FindStringSubmatch(errOut)
	if id == nil || !strings.Contains(errOut, `the lock of stack "stall-after" on the default cluster was not released`) {
		t.Fatalf("the lock's fate is not told:\n%s", errOut)
	}
	t.Logf("after the grace period: record %s; %s", revisions(h), strings.TrimSpace(errOut))

	// The one command, then apply: the pending record is healed and the
	// release upgraded.
	kc := own.Kubeconfig()
	dir := writeStack(t, fmt.Sprintf("stack \"stall-after\" {\n  default_namespace = %[2]q\n}\nrelease \"after\" {\n  chart   = %[1]q\n  timeout = \"30s\"\n}\n", chart, ns))
	// The run ran in this test's process, which is still running:
	// force-unlock must be forced (a CLI run's process has ended).
	if code, out, errOut := runConvoy(t, "force-unlock", id[1], "--force", "-C", dir, "--kubeconfig", kc); code != 0 {
		t.Fatalf("force-unlock %s: %d\n%s\n%s", id[1], code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 || revisions(storedHistory(t, eng, ns, "after")) != "1:failed 2:deployed" {
		t.Fatalf("apply after the stall: exit %d, %s\n%s\n%s", code, revisions(storedHistory(t, eng, ns, "after")), out, errOut)
	}
}

func exitCode(err error, stderr *bytes.Buffer) int {
	if err == nil {
		return 0
	}
	// As execute reports it.
	if ee, ok := err.(*exitError); ok && ee.err == nil {
		return ee.code
	}
	fmt.Fprintf(stderr, "Error: %v\n", err)
	return 1
}

func storedHistory(t *testing.T, eng *release.Engine, ns, name string) []*release.Release {
	t.Helper()
	h, err := eng.Storage(ns).History(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func leaseExists(t *testing.T, client kubernetes.Interface, stack string) bool {
	t.Helper()
	_, err := client.CoordinationV1().Leases(stacklock.Namespace).Get(context.Background(), stacklock.Name(stack), metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}
