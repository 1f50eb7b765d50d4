package controller_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// process is a controller running as a separate process.
type process struct {
	cmd *exec.Cmd
	log string
}

func startProcess(t *testing.T, o controller.Options) *process {
	t.Helper()
	spec, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	p := &process{log: filepath.Join(t.TempDir(), o.Identity+".log")}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(os.Args[0])
	p.cmd.Env = append(os.Environ(), envChild+"="+string(spec))
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
			t.Logf("%s log (tail):\n%s", o.Identity, tail(string(b), 3000))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// holder is the identity holding a shard's Lease.
func holder(t *testing.T, ns, shard string) string {
	t.Helper()
	l, err := cluster.Client().CoordinationV1().Leases(ns).Get(context.Background(), controller.LeaseName(shard), metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// Three controller processes, two shards: each Stack is reconciled by one
// of them; killing the leader of shard a hands it to the other replica
// within the lease duration, and no apply runs twice.
func TestThreeProcessesTwoShardsLeaderKill(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	stacks := map[string]string{} // Stack name → its releases' namespace
	dirs := map[string]string{}
	for _, name := range []string{"a1", "a2", "b1", "b2"} {
		rns := cluster.Namespace(t)
		stacks[name] = rns
		dirs[name] = stackDir(t, rns, "v1", "")
		push(t, reg, dirs[name], name)
		create(t, c, newStack(ns, name, "oci://"+reg.Host+"/stacks/app:"+name, func(st *v1alpha1.Stack) {
			st.Labels = map[string]string{v1alpha1.ShardLabel: name[:1]}
		}))
	}
	const lease = 4 * time.Second
	procs := map[string]*process{}
	for _, p := range []struct{ id, shard string }{{"p1", "a"}, {"p2", "a"}, {"p3", "b"}} {
		procs[p.id] = startProcess(t, controller.Options{MinInterval: testMinInterval,
			Kubeconfig: cluster.Kubeconfig(), Namespace: ns, Shard: p.shard, Identity: p.id, CacheDir: t.TempDir(),
			MetricsAddress: "0", HealthAddress: "0",
			LeaderElect: true, LeaderElectionNamespace: ns, LeaseDuration: lease, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
		})
	}
	for name := range stacks {
		waitStack(t, c, ns, name, 90*time.Second, "Ready", func(st *v1alpha1.Stack) bool {
			return isCond("Ready", metav1.ConditionTrue, "")(st) && revisionsOf(st) == "api:1:deployed web:1:deployed"
		})
	}
	if h := holder(t, ns, "b"); h != "p3" {
		t.Fatalf("shard b held by %q", h)
	}
	leader := holder(t, ns, "a")
	other := map[string]string{"p1": "p2", "p2": "p1"}[leader]
	if other == "" {
		t.Fatalf("shard a held by %q", leader)
	}
	if err := procs[leader].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for holder(t, ns, "a") != other {
		if time.Since(killed) > 3*lease {
			t.Fatalf("shard a still held by %q %s after its leader was killed", holder(t, ns, "a"), time.Since(killed))
		}
		time.Sleep(100 * time.Millisecond)
	}
	takeover := time.Since(killed)
	t.Logf("shard a taken over by %s %s after %s was killed (lease %s)", other, takeover.Round(100*time.Millisecond), leader, lease)
	if takeover > lease+2*time.Second {
		t.Errorf("takeover took %s, more than the lease duration %s and the retry period", takeover, lease)
	}

	// The new leader upgrades a1 on a new push.
	push(t, reg, stackDir(t, stacks["a1"], "v2", ""), "a1")
	waitStack(t, c, ns, "a1", 90*time.Second, "upgraded", func(st *v1alpha1.Stack) bool {
		return revisionsOf(st) == "api:2:deployed web:2:deployed"
	})
	// Two more reconciles of every Stack: nothing is applied again.
	waitReconciles(t, c, ns, 2, "a1", "a2", "b1", "b2")
	want := map[string]int{"a1": 2, "a2": 1, "b1": 1, "b2": 1}
	for name, rns := range stacks {
		for _, rel := range []string{"api", "web"} {
			secrets, err := cluster.Client().CoreV1().Secrets(rns).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + rel})
			if err != nil {
				t.Fatal(err)
			}
			if len(secrets.Items) != want[name] {
				var revs []string
				for _, s := range secrets.Items {
					revs = append(revs, s.Labels["version"]+":"+s.Labels["status"])
				}
				t.Errorf("Stack %s release %s: %d revisions (%s), want %d", name, rel, len(secrets.Items), strings.Join(revs, " "), want[name])
			}
		}
	}
}
