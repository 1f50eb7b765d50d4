package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The test binary is the devcluster command when asked (as `up` runs
// itself again with `run`): no build of its own.
func TestMain(m *testing.M) {
	if os.Getenv("DEVCLUSTER_MAIN") != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A component SIGKILLed under `devcluster up` is started again with its
// data, the others run on, and the state directory stays; `devcluster
// restart` restarts one on request. Before, the first component's death
// stopped every component and removed the state (issue 54, item 5).
func TestKilledComponentIsStartedAgain(t *testing.T) {
	devtest.Tools(t) // skips under -short; the binary finds the tools in the same environment
	state := t.TempDir()
	dc := func(args ...string) (string, error) {
		cmd := exec.Command(os.Args[0], append(args[:1:1], append([]string{"--state", state}, args[1:]...)...)...)
		cmd.Env = append(os.Environ(), "DEVCLUSTER_MAIN=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := dc("up", "--nodes", "1"); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	defer func() {
		if out, err := dc("down"); err != nil {
			t.Errorf("down: %v\n%s", err, out)
		}
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(state, "devcluster.log"))
			t.Logf("devcluster.log:\n%s", log)
		}
	}()
	pids := func() map[string]int {
		out, err := dc("pids")
		if err != nil {
			t.Fatalf("pids: %v\n%s", err, out)
		}
		m := map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			name, pid, _ := strings.Cut(line, " ")
			m[name], _ = strconv.Atoi(pid)
		}
		return m
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(state, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	before := pids()
	if err := syscall.Kill(-before["kube-apiserver"], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var now map[string]int
	devtest.Eventually(t, time.Minute, func() bool {
		now = pids()
		_, err := client.CoreV1().Namespaces().Get(ctx, "kept", metav1.GetOptions{})
		return now["kube-apiserver"] != before["kube-apiserver"] && err == nil
	}, func() string {
		return fmt.Sprintf("the API server was not started again: pids %v, before %v", now, before)
	})
	for name, pid := range before {
		if name != "kube-apiserver" && now[name] != pid {
			t.Errorf("%s: pid %d → %d, want it left running", name, pid, now[name])
		}
	}

	out, err := dc("restart", "--down", "1s", "controller-manager")
	if err != nil || !strings.HasPrefix(out, "controller-manager restarted (pid ") {
		t.Fatalf("restart controller-manager: %v\n%s", err, out)
	}
	if after := pids(); after["kube-controller-manager"] == now["kube-controller-manager"] || after["etcd"] != now["etcd"] {
		t.Errorf("after restart controller-manager: pids %v, before %v", after, now)
	}
	if out, err := dc("restart", "kubelet"); err == nil || !strings.Contains(out, "no component \"kubelet\"") {
		t.Errorf("restart kubelet: %v\n%s", err, out)
	}
}
