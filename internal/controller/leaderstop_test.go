package controller_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A leader stopped (SIGSTOP) mid-apply and resumed after its successor
// applied writes nothing and notifies nothing before it exits: the Stack
// stays Ready as the successor left it, and no Failed notification
// follows the Applied one (issue 54, item 1: the resumed ex-leader set
// ApplyFailed and sent Failed).
func TestStoppedLeaderResumedWritesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	bin := buildConvoy(t)
	rns := cluster.Namespace(t)
	// v1: api's pods are never ready; its apply waits.
	push(t, reg, stackDir(t, rns, "v1", "set = { neverReady = true }\n  timeout = \"10m\""), "stop")
	h := &hook{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	create(t, c, newStack(ns, "stop", "oci://"+reg.Host+"/stacks/app:stop", func(st *v1alpha1.Stack) {
		st.Spec.Notifications = []v1alpha1.Notification{{URL: srv.URL + "/convoy"}}
	}))

	const lease = 4 * time.Second
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	procs := map[string]*process{}
	for _, name := range []string{"c1", "c2"} {
		p := startBinary(t, bin, name,
			"--kubeconfig", cluster.Kubeconfig(), "--namespace", ns, "--cache-dir", t.TempDir(),
			"--metrics-address", "0", "--health-address", "0", "--min-interval", testMinInterval.String(),
			"--leader-elect", "--leader-election-namespace", ns,
			"--lease-duration", lease.String(), "--renew-deadline", "3s", "--retry-period", "500ms")
		procs[fmt.Sprintf("%s-%d", host, p.cmd.Process.Pid)] = p
	}
	t.Cleanup(func() { dropFinalizers(t, ns) })

	// The leader applies v1: api's revision 1 pending, waiting.
	secrets := cluster.Client().CoreV1().Secrets(rns)
	devtest.Eventually(t, 2*time.Minute, func() bool {
		s, err := secrets.Get(context.Background(), "sh.helm.release.v1.api.v1", metav1.GetOptions{})
		return err == nil && s.Labels["status"] == string(release.StatusPendingInstall)
	}, func() string { return "the leader never started applying api:" + describe(getStack(t, c, ns, "stop")) })
	leader := holder(t, ns, "")
	stopped := procs[leader]
	if stopped == nil {
		t.Fatalf("the Lease is held by %q, neither process", leader)
	}
	if err := syscall.Kill(stopped.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(stopped.cmd.Process.Pid, syscall.SIGCONT)
		}
	}
	defer resume()

	// v2 gets ready: the successor applies it once the stopped leader's
	// stack lock expired.
	push(t, reg, stackDir(t, rns, "v2", "timeout = \"10m\""), "stop")
	waitStack(t, c, ns, "stop", 3*time.Minute, "applied by the successor", isCond("Ready", metav1.ConditionTrue, "Applied"))
	handover := time.Since(frozen)
	var successor string
	if successor = holder(t, ns, ""); successor == leader || procs[successor] == nil {
		t.Fatalf("the Lease is held by %q after the leader %q was stopped", successor, leader)
	}
	devtest.Eventually(t, 30*time.Second, func() bool { return countEvents(h, "Applied") > 0 },
		func() string { return "no Applied notification" })
	failedBefore := countEvents(h, "Failed")

	// The stopped leader goes on, finds its lead lost, and exits.
	resume()
	resumedAt := time.Now()
	exited := make(chan struct{})
	go func() { _ = stopped.cmd.Wait(); close(exited) }()
	notReady := ""
	for done := false; !done; {
		select {
		case <-exited:
			done = true
		case <-time.After(200 * time.Millisecond):
			if time.Since(resumedAt) > 2*time.Minute {
				t.Fatalf("the resumed ex-leader did not exit within 2m")
			}
			if st := getStack(t, c, ns, "stop"); !isCond("Ready", metav1.ConditionTrue, "")(st) && notReady == "" {
				notReady = describe(st)
			}
		}
	}
	t.Logf("handover (SIGSTOP to the successor's Applied): %s; the ex-leader exited %s after SIGCONT", handover.Round(100*time.Millisecond), time.Since(resumedAt).Round(100*time.Millisecond))
	// It has exited: whatever it sent, the hook has received.
	if notReady != "" {
		t.Errorf("the Stack was not Ready while the ex-leader went on:%s", notReady)
	}
	if st := getStack(t, c, ns, "stop"); !isCond("Ready", metav1.ConditionTrue, "")(st) {
		t.Errorf("the Stack is not Ready after the ex-leader exited:%s", describe(st))
	}
	if n := countEvents(h, "Failed"); n != failedBefore {
		t.Errorf("%d Failed notifications after the Applied one (%d before)", n-failedBefore, failedBefore)
	}
}

func countEvents(h *hook, event string) int {
	n := 0
	for _, doc := range h.Received() {
		if doc["event"] == event {
			n++
		}
	}
	return n
}
