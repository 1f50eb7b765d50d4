package devcluster_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// startOwn starts a one-node cluster for t alone, stopped when t ends.
func startOwn(t *testing.T, policy devcluster.RestartPolicy) (*devcluster.Cluster, kubernetes.Interface) {
	t.Helper()
	c, err := devcluster.Start(context.Background(), devcluster.Options{Tools: devtest.Tools(t), Nodes: 1, Restart: policy, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c, kubernetes.NewForConfigOrDie(c.RESTConfig())
}

// A component killed from outside (SIGKILL, as a crash) leaves the others
// running and the cluster's directory in place. Under RestartNever it
// stays down and Err names it, until Restart brings it back (then each
// other component in turn: restartEach); under RestartOnExit it is
// started again with its data. Before, bin/devcluster stopped every
// component and removed the directory on the first one's death.
func TestKilledComponent(t *testing.T) {
	t.Run("RestartNever", func(t *testing.T) {
		c, client := startOwn(t, devcluster.RestartNever)
		writeKept(t, client)
		before := c.Pids()
		if err := syscall.Kill(-before["kwok"], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		var err error
		devtest.Eventually(t, 10*time.Second, func() bool { err = c.Err(); return err != nil },
			func() string { return "Err does not report the killed kwok" })
		if !strings.HasPrefix(err.Error(), "kwok exited (signal: killed)") {
			t.Errorf("Err = %v, want kwok's exit", err)
		}
		for comp, pid := range before {
			if comp != "kwok" && syscall.Kill(pid, 0) != nil {
				t.Errorf("%s (pid %d) died with kwok", comp, pid)
			}
		}
		if _, err := os.Stat(c.Dir()); err != nil {
			t.Errorf("cluster directory: %v", err)
		}
		// Restart brings it back, and each of the others in turn.
		restartEach(t, c, client)
	})
	t.Run("RestartOnExit", func(t *testing.T) {
		c, client := startOwn(t, devcluster.RestartOnExit)
		ctx := context.Background()
		writeKept(t, client)
		before := c.Pids()
		killed := time.Now()
		if err := syscall.Kill(-before["kube-apiserver"], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		var got *corev1.ConfigMap
		var err error
		devtest.Eventually(t, 30*time.Second, func() bool {
			got, err = client.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
			return err == nil
		}, func() string { return fmt.Sprintf("the API server does not answer after its SIGKILL: %v", err) })
		t.Logf("the killed API server answered again %s after its SIGKILL", time.Since(killed).Round(100*time.Millisecond))
		if got.Data["k"] != "v" {
			t.Errorf("ConfigMap after the restart: %v", got.Data)
		}
		after := c.Pids()
		if after["kube-apiserver"] == before["kube-apiserver"] {
			t.Error("the API server's pid is unchanged")
		}
		for comp, pid := range before {
			if comp != "kube-apiserver" && after[comp] != pid {
				t.Errorf("%s was restarted too (pid %d → %d)", comp, pid, after[comp])
			}
		}
		if err := c.Err(); err != nil {
			t.Error(err)
		}
	})
}

func writeKept(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}, Data: map[string]string{"k": "v"}}
	if _, err := client.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// restartEach restarts every component with Restart, for fault-injection
// tests: the others run on (their pids unchanged), etcd's data is kept
// (the ConfigMap "kept" written before is read after), and every
// component works afterwards (a Deployment, which needs the
// controller-manager, the scheduler and kwok, becomes Available).
func restartEach(t *testing.T, c *devcluster.Cluster, client kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	for _, name := range []string{"kwok", "kube-apiserver", "etcd", "controller-manager", "scheduler"} {
		before := c.Pids()
		down := time.Duration(0)
		if name == "kube-apiserver" {
			down = 2 * time.Second
		}
		start := time.Now()
		if err := c.Restart(ctx, name, down); err != nil {
			t.Fatalf("restart %s: %v", name, err)
		}
		t.Logf("%s restarted in %s (down %s)", name, time.Since(start).Round(time.Millisecond), down)
		after := c.Pids()
		full := name
		if !strings.HasPrefix(full, "kube-") && full != "etcd" && full != "kwok" {
			full = "kube-" + name
		}
		for comp, pid := range before {
			switch {
			case comp == full && after[comp] == pid:
				t.Errorf("%s: pid %d unchanged by its restart", comp, pid)
			case comp != full && after[comp] != pid:
				t.Errorf("restart %s changed %s's pid %d → %d", name, comp, pid, after[comp])
			}
			if syscall.Kill(after[comp], 0) != nil {
				t.Errorf("restart %s: %s (pid %d) is not running", name, comp, after[comp])
			}
		}
		if err := c.Err(); err != nil {
			t.Errorf("restart %s: %v", name, err)
		}
		got, err := client.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{})
		if err != nil || got.Data["k"] != "v" {
			t.Fatalf("after restarting %s the ConfigMap written before is %v (%v)", name, got.Data, err)
		}
	}
	if _, err := client.AppsV1().Deployments("default").Create(ctx, deployment("after", 1, labels(nil)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last *appsv1.Deployment
	devtest.Eventually(t, time.Minute, func() bool {
		last, _ = client.AppsV1().Deployments("default").Get(ctx, "after", metav1.GetOptions{})
		return last != nil && available(last)
	}, func() string { return fmt.Sprintf("Deployment not Available after the restarts: %+v", last.Status) })
	if err := c.Restart(ctx, "kubelet", 0); err == nil || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Errorf("restart of an unknown component: %v, want the list of components", err)
	}
}
