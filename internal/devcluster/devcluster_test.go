package devcluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

var cluster = devtest.New()

func TestMain(m *testing.M) {
	if os.Getenv("DEVCLUSTER_TEST_CHILD") != "" {
		os.Exit(childStartsCluster())
	}
	os.Exit(cluster.Run(m))
}

func TestServerVersion(t *testing.T) {
	cluster.Need(t)
	v, err := cluster.Client().Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v1.36.3" || v.Major != "1" || v.Minor != "36" {
		t.Fatalf("server reports %s (major %q minor %q), want v1.36.3", v.GitVersion, v.Major, v.Minor)
	}
}

func labels(extra map[string]string) map[string]string {
	m := map[string]string{"app": "web"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func deployment(name string, replicas int32, podLabels map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
}

func job(name string, podLabels map[string]string) *batchv1.Job {
	backoff := int32(0)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			BackoffLimit: &backoff,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "migrate", Image: "busybox:1.36"}},
				},
			},
		},
	}
}

func available(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			return d.Status.AvailableReplicas == *d.Spec.Replicas
		}
	}
	return false
}

func TestDeploymentBecomesAvailable(t *testing.T) {
	ns := cluster.Namespace(t)
	client := cluster.Client()
	ctx := context.Background()
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, deployment("web", 2, labels(nil)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last *appsv1.Deployment
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		d, err := client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = d
		return available(d), nil
	})
	if err != nil {
		t.Fatalf("2-replica Deployment not Available within 30s: %v; status %+v", err, last.Status)
	}
}

func TestNeverReadyDeploymentStaysUnavailable(t *testing.T) {
	ns := cluster.Namespace(t)
	client := cluster.Client()
	ctx := context.Background()
	d := deployment("stuck", 2, labels(map[string]string{devcluster.LabelNeverReady: "true"}))
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The pods must really exist and run (otherwise "unavailable" proves
	// nothing), yet never turn Ready.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 2, nil
	})
	if err != nil {
		t.Fatalf("never-ready pods did not reach Running: %v", err)
	}
	// Observe for 10s. A read that fails (an overloaded machine) is not an
	// observation; at least half of them must succeed.
	deadline := time.Now().Add(10 * time.Second)
	observed, tries := 0, 0
	for time.Now().Before(deadline) {
		tries++
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		got, err := client.AppsV1().Deployments(ns).Get(rctx, "stuck", metav1.GetOptions{})
		cancel()
		if err == nil {
			observed++
			if available(got) || got.Status.ReadyReplicas > 0 {
				t.Fatalf("never-ready Deployment became ready: %+v", got.Status)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	if observed < tries/2 {
		t.Fatalf("only %d of %d reads of the Deployment succeeded", observed, tries)
	}
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && (c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotReady") {
				t.Errorf("pod %s Ready condition %s/%s, want False/ContainersNotReady", p.Name, c.Status, c.Reason)
			}
		}
	}
}

func waitJob(t *testing.T, client kubernetes.Interface, ns, name string, want batchv1.JobConditionType) {
	t.Helper()
	ctx := context.Background()
	var last *batchv1.Job
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		j, err := client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = j
		for _, c := range j.Status.Conditions {
			if c.Status != corev1.ConditionTrue {
				continue
			}
			if c.Type == want {
				return true, nil
			}
			if c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed {
				return false, fmt.Errorf("job ended %s (%s), want %s", c.Type, c.Message, want)
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("Job %s: %v; status %+v", name, err, last.Status)
	}
}

func TestJobCompletes(t *testing.T) {
	ns := cluster.Namespace(t)
	if _, err := cluster.Client().BatchV1().Jobs(ns).Create(context.Background(), job("migrate", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitJob(t, cluster.Client(), ns, "migrate", batchv1.JobComplete)
}

func TestFailingJobFails(t *testing.T) {
	ns := cluster.Namespace(t)
	j := job("migrate", map[string]string{devcluster.LabelFail: "true"})
	if _, err := cluster.Client().BatchV1().Jobs(ns).Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitJob(t, cluster.Client(), ns, "migrate", batchv1.JobFailed)
	pods, err := cluster.Client().CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 || pods.Items[0].Status.Phase != corev1.PodFailed ||
		pods.Items[0].Status.ContainerStatuses[0].State.Terminated == nil ||
		pods.Items[0].Status.ContainerStatuses[0].State.Terminated.ExitCode != 1 {
		t.Fatalf("failing job's pod is not Failed with exit code 1: %+v", pods.Items)
	}
}

// TestTwoClustersSideBySide starts two more clusters at once: both work,
// neither sees the other's objects, and after Stop no process of either is
// left, not even in their process groups.
func TestTwoClustersSideBySide(t *testing.T) {
	tools := devtest.Tools(t)
	ctx := context.Background()
	var clusters [2]*devcluster.Cluster
	var errs [2]error
	var wg sync.WaitGroup
	for i := range clusters {
		wg.Go(func() {
			clusters[i], errs[i] = devcluster.Start(ctx, devcluster.Options{Tools: tools, Nodes: 1})
		})
	}
	wg.Wait()
	for i, c := range clusters {
		if errs[i] != nil {
			for _, c := range clusters {
				if c != nil {
					c.Stop()
				}
			}
			t.Fatalf("cluster %d: %v", i, errs[i])
		}
		defer c.Stop()
	}
	if clusters[0].RESTConfig().Host == clusters[1].RESTConfig().Host {
		t.Fatalf("both clusters serve at %s", clusters[0].RESTConfig().Host)
	}
	var clients [2]kubernetes.Interface
	for i, c := range clusters {
		clients[i] = kubernetes.NewForConfigOrDie(c.RESTConfig())
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-in-first"}, Data: map[string]string{"k": "v"}}
	if _, err := clients[0].CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := clients[1].CoreV1().ConfigMaps("default").Get(ctx, "only-in-first", metav1.GetOptions{}); err == nil {
		t.Fatal("second cluster sees the first cluster's ConfigMap: they share storage")
	}

	var pids []int
	for _, c := range clusters {
		for _, pid := range c.Pids() {
			pids = append(pids, pid)
		}
	}
	if len(pids) != 10 {
		t.Fatalf("want 5 components per cluster, got pids %v", pids)
	}
	dirs := []string{clusters[0].Dir(), clusters[1].Dir()}
	for _, c := range clusters {
		c.Stop()
	}
	assertGone(t, pids, 0)
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("cluster directory %s left behind", d)
		}
	}
}

// TestChildrenDieWithParent kills (SIGKILL, no cleanup) a process that
// started a cluster; every component must die with it.
func TestChildrenDieWithParent(t *testing.T) {
	devtest.SkipShort(t, "the devcluster tools")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DEVCLUSTER_TEST_CHILD=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var report childReport
	line, err := bufio.NewReader(out).ReadString('\n')
	if err == nil {
		err = json.Unmarshal([]byte(line), &report)
	}
	if err != nil || report.Error != "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child did not start a cluster: %v %s", err, report.Error)
	}
	defer os.RemoveAll(report.Dir)
	var pids []int
	for _, pid := range report.Pids {
		pids = append(pids, pid)
	}
	if len(pids) != 5 {
		t.Fatalf("child reports pids %v", report.Pids)
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) != nil {
			t.Fatalf("component %d not running before the parent is killed", pid)
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	assertGone(t, pids, 15*time.Second)
}

type childReport struct {
	Pids  map[string]int `json:"pids"`
	Dir   string         `json:"dir"`
	Error string         `json:"error"`
}

func childStartsCluster() int {
	tools, err := devcluster.LocateTools(os.Getenv)
	var c *devcluster.Cluster
	if err == nil {
		c, err = devcluster.Start(context.Background(), devcluster.Options{Tools: tools, Nodes: 1})
	}
	r := childReport{}
	if err != nil {
		r.Error = err.Error()
	} else {
		r.Pids, r.Dir = c.Pids(), c.Dir()
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	if err != nil {
		return 1
	}
	select {} // wait to be killed
}

// assertGone fails unless every pid and every member of its process group
// has exited within timeout. Zombies of already-reaped children don't exist:
// the cluster waits for each process it starts.
func assertGone(t *testing.T, pids []int, timeout time.Duration) {
	t.Helper()
	var alive []string
	devtest.Eventually(t, timeout, func() bool {
		alive = nil
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				alive = append(alive, strconv.Itoa(pid))
			}
			for _, member := range groupMembers(pid) {
				alive = append(alive, fmt.Sprintf("%d (group %d)", member, pid))
			}
		}
		return len(alive) == 0
	}, func() string { return "processes left after teardown: " + strings.Join(alive, ", ") })
}

// groupMembers lists live processes whose process group is pgid.
func groupMembers(pgid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var members []int
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses and may
		// itself contain spaces: state ppid pgrp ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			members = append(members, pid)
		}
	}
	return members
}

func TestReadyAfterDelaysReadiness(t *testing.T) {
	ns := cluster.Namespace(t)
	client := cluster.Client()
	ctx := context.Background()
	d := deployment("slow", 1, labels(nil))
	d.Spec.Template.Annotations = map[string]string{devcluster.AnnotationReadyAfter: "2s"}
	start := time.Now()
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client.AppsV1().Deployments(ns).Get(ctx, "slow", metav1.GetOptions{})
		return err == nil && available(got), nil
	})
	if err != nil {
		t.Fatalf("Deployment with ready-after 2s never became Available: %v", err)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Fatalf("Available after %s, before the 2s readiness delay", took)
	}
}

// A pod's log given with PodLog, and a namespace's with NamespaceLog, come
// back through the pods/log API (kube-apiserver → kwok's kubelet server) of
// a Failed pod and of a Job's pod; a pod with neither has no logs.
func TestPodLogs(t *testing.T) {
	ns := cluster.Namespace(t)
	client := cluster.Client()
	ctx := context.Background()
	cluster.PodLog(t, ns, "failing", "checking the database", "error: connection refused")
	cluster.NamespaceLog(t, ns, "migrated 3 tables")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "failing", Labels: map[string]string{devcluster.LabelFail: "true"}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "check", Image: "busybox:1.36"}, {Name: "side", Image: "busybox:1.36"}},
		},
	}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.BatchV1().Jobs(ns).Create(ctx, job("migrate", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(ns).Get(ctx, "failing", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodFailed, nil
	})
	if err != nil {
		t.Fatalf("pod never Failed: %v", err)
	}
	logOf := func(pod, container string) (string, error) {
		b, err := client.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
		return string(b), err
	}
	for _, c := range []string{"check", "side"} {
		if got, err := logOf("failing", c); err != nil || got != "checking the database\nerror: connection refused\n" {
			t.Errorf("log of failing/%s: %q, %v", c, got, err)
		}
	}
	waitJob(t, client, ns, "migrate", batchv1.JobComplete)
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=migrate"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("job's pods: %v, %v", pods, err)
	}
	if got, err := logOf(pods.Items[0].Name, "migrate"); err != nil || got != "migrated 3 tables\n" {
		t.Errorf("log of the job's pod: %q, %v", got, err)
	}

	other := cluster.Namespace(t)
	pod.Name, pod.Labels = "quiet", nil
	if _, err := client.CoreV1().Pods(other).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(other).Get(ctx, "quiet", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodSucceeded, nil
	})
	if err != nil {
		t.Fatalf("pod never Succeeded: %v", err)
	}
	if got, err := client.CoreV1().Pods(other).GetLogs("quiet", &corev1.PodLogOptions{Container: "check"}).DoRaw(ctx); err == nil || !strings.Contains(string(got), "no logs found for container") {
		t.Errorf("log of a pod without logs: %q, %v", got, err)
	}
}

// A pod no Job owns whose restartPolicy is Never or OnFailure (helm
// create's test-connection hook) runs its containers to their end, as a
// Job's pod does: Succeeded once its ready-after has passed, Failed with
// the fail label; never-ready keeps it running, and a pod that restarts
// its containers (Always, the default) runs on (issue 55, item 12: such
// test hooks ran forever and convoy test hung).
func TestBarePodsExit(t *testing.T) {
	ns := cluster.Namespace(t)
	client := cluster.Client()
	ctx := context.Background()
	pod := func(name string, policy corev1.RestartPolicy, labels, annotations map[string]string) {
		t.Helper()
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations},
			Spec:       corev1.PodSpec{RestartPolicy: policy, Containers: []corev1.Container{{Name: "wget", Image: "busybox:1.36"}}},
		}
		if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	pod("test-connection", corev1.RestartPolicyNever, nil, map[string]string{devcluster.AnnotationReadyAfter: "2s"})
	pod("on-failure", corev1.RestartPolicyOnFailure, nil, nil)
	pod("failing", corev1.RestartPolicyNever, map[string]string{devcluster.LabelFail: "true"}, nil)
	pod("server", corev1.RestartPolicyAlways, nil, nil)
	pod("hanging", corev1.RestartPolicyNever, map[string]string{devcluster.LabelNeverReady: "true"}, nil)

	phaseOf := func(name string, want corev1.PodPhase) *corev1.Pod {
		t.Helper()
		var got *corev1.Pod
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			p, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			got = p
			return p.Status.Phase == want, nil
		})
		if err != nil {
			t.Fatalf("pod %s: phase %s, want %s: %v", name, got.Status.Phase, want, err)
		}
		return got
	}
	p := phaseOf("test-connection", corev1.PodSucceeded)
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("test-connection Succeeded after %s, before its ready-after (2s)", took)
	}
	if cs := p.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 0 || cs[0].State.Terminated.Reason != "Completed" {
		t.Errorf("test-connection's containers: %+v", cs)
	}
	phaseOf("on-failure", corev1.PodSucceeded)
	phaseOf("failing", corev1.PodFailed)
	// Running since before test-connection succeeded, and running on.
	phaseOf("server", corev1.PodRunning)
	phaseOf("hanging", corev1.PodRunning)
}
