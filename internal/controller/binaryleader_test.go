package controller_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// buildConvoy builds the convoy command into a temporary directory: the
// binary a user runs, not this test binary.
func buildConvoy(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "convoy")
	start := time.Now()
	out, err := exec.Command("go", "build", "-o", bin, "github.com/convoy-sh/convoy/cmd/convoy").CombinedOutput()
	if err != nil {
		t.Fatalf("go build convoy: %v\n%s", err, out)
	}
	t.Logf("built convoy in %s", time.Since(start).Round(100*time.Millisecond))
	return bin
}

// startBinary runs `convoy controller ARGS…`, logging to a file shown when
// the test fails, and stops it (SIGTERM, then SIGKILL) when the test ends.
func startBinary(t *testing.T, bin, name string, args ...string) *process {
	t.Helper()
	p := &process{log: filepath.Join(t.TempDir(), name+".log")}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, append([]string{"controller"}, args...)...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			t.Logf("%s (pid %d) log (tail):\n%s", name, p.cmd.Process.Pid, tail(string(b), 3000))
		}
	})
	return p
}

// Two `convoy controller --leader-elect` processes of the built binary:
// one holds the Lease and applies the Stack; killed with SIGKILL, the other
// takes the Lease over once it expires and applies the next change, and no
// release gets a revision it should not have.
func TestBuiltBinaryLeaderKilled(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	bin := buildConvoy(t)
	rns := cluster.Namespace(t)
	push(t, reg, stackDir(t, rns, "v1", ""), "bin")
	create(t, c, newStack(ns, "bin", "oci://"+reg.Host+"/stacks/app:bin", nil))

	const (
		lease  = 4 * time.Second
		renew  = 3 * time.Second
		retry  = 500 * time.Millisecond
		margin = 5 * time.Second // API latency on a loaded machine
	)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	procs := map[string]*process{} // the Lease identity (host-pid) → process
	for _, name := range []string{"c1", "c2"} {
		p := startBinary(t, bin, name,
			"--kubeconfig", cluster.Kubeconfig(), "--namespace", ns, "--cache-dir", t.TempDir(),
			"--metrics-address", "0", "--health-address", "0", "--min-interval", testMinInterval.String(),
			"--leader-elect", "--leader-election-namespace", ns,
			"--lease-duration", lease.String(), "--renew-deadline", renew.String(), "--retry-period", retry.String())
		procs[fmt.Sprintf("%s-%d", host, p.cmd.Process.Pid)] = p
	}

	waitStack(t, c, ns, "bin", 90*time.Second, "Ready with revision 1", func(st *v1alpha1.Stack) bool {
		return isCond("Ready", metav1.ConditionTrue, "")(st) && revisionsOf(st) == "api:1:deployed web:1:deployed"
	})
	leader := holder(t, ns, "")
	if procs[leader] == nil {
		t.Fatalf("the Lease is held by %q, neither process (%v)", leader, keys(procs))
	}
	var other string
	for id := range procs {
		if id != leader {
			other = id
		}
	}
	if err := procs[leader].cmd.Process.Kill(); err != nil { // SIGKILL: no release of the Lease
		t.Fatal(err)
	}
	killed := time.Now()
	bound := lease + retry + margin
	for h := holder(t, ns, ""); h != other; h = holder(t, ns, "") {
		if time.Since(killed) > bound {
			t.Fatalf("the Lease is still held by %q %s after its holder was killed (lease %s, retry %s)", h, time.Since(killed).Round(100*time.Millisecond), lease, retry)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%s took the Lease over %s after %s was killed (lease %s, retry %s)", other, time.Since(killed).Round(100*time.Millisecond), leader, lease, retry)
	if procs[other].cmd.ProcessState != nil {
		t.Fatalf("the new leader exited: %s", procs[other].cmd.ProcessState)
	}

	// The new leader applies the next push, once.
	push(t, reg, stackDir(t, rns, "v2", ""), "bin")
	waitStack(t, c, ns, "bin", 90*time.Second, "upgraded to revision 2", func(st *v1alpha1.Stack) bool {
		return isCond("Ready", metav1.ConditionTrue, "")(st) && revisionsOf(st) == "api:2:deployed web:2:deployed"
	})
	waitReconciles(t, c, ns, 2, "bin")
	for _, rel := range []string{"api", "web"} {
		secrets, err := cluster.Client().CoreV1().Secrets(rns).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + rel})
		if err != nil {
			t.Fatal(err)
		}
		var revs []string
		for _, s := range secrets.Items {
			revs = append(revs, s.Labels["version"]+":"+s.Labels["status"])
		}
		if got := strings.Join(sortedCopy(revs), " "); got != "1:superseded 2:deployed" {
			t.Errorf("release %s/%s has revisions %q, want exactly 1:superseded 2:deployed", rns, rel, got)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	slices.Sort(out)
	return out
}
