package release

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRequest runs a release's test hooks (helm test).
type TestRequest struct {
	Name      string
	Namespace string
	// Timeout bounds each test hook's wait; 0 means DefaultTimeout.
	Timeout time.Duration
	// Only, when not empty, names the tests to run (helm test --filter
	// name=...); Skip names tests not to run (--filter '!name=...'). The
	// others keep their previous last run.
	Only, Skip []string
	// Logs reads the pods' logs of every test that ran (helm test
	// --logs), not only of the failed one.
	Logs bool
}

// selects reports whether the request runs the test hook h.
func (r TestRequest) selects(h *Hook) bool {
	return !slices.Contains(r.Skip, h.Name) && (len(r.Only) == 0 || slices.Contains(r.Only, h.Name))
}

// TestResult is what a test run did: the release record with the test
// hooks' last runs updated, and, when a test failed, the logs of its pods.
type TestResult struct {
	Release *Release
	// Hooks are the release's test hooks the request selects in the order
	// they ran (or would have: those after a failure keep their previous
	// last run).
	Hooks []*Hook
	// Skipped are the test hooks the request left out.
	Skipped []*Hook
	// Err is the failed test (a *HookError), nil when every test passed.
	Err error
	// Logs are the container logs of the failed test's pods and, when the
	// request asks for them, of every test that ran, in the tests' order.
	Logs []PodLog
}

// PodLog is one container's log, or why it could not be read.
type PodLog struct {
	// Hook is the test (hook name) whose pod this is.
	Hook      string
	Pod       string
	Container string
	Log       string
	Err       error
}

// maxLogBytes bounds each container's log kept for printing.
const maxLogBytes = 64 << 10

// Test runs the test hooks of a release's newest revision as helm test does:
// in weight and name order, each (re)created and waited to completion,
// stopping at the first failure; the hooks' last runs are saved in the
// record whatever the outcome. An error is returned only when the tests
// could not be run; a failing test is TestResult.Err.
func (e *Engine) Test(ctx context.Context, req TestRequest) (*TestResult, error) {
	store := e.Storage(req.Namespace)
	rel, err := store.Last(ctx, req.Name)
	if err != nil {
		return nil, fmt.Errorf("release %s (namespace %s): %w", req.Name, req.Namespace, err)
	}
	res := &TestResult{Release: rel}
	for _, h := range hooksOf(rel, chart.HookTest) {
		if req.selects(h) {
			res.Hooks = append(res.Hooks, h)
		} else {
			res.Skipped = append(res.Skipped, h)
		}
	}
	if len(res.Hooks) == 0 {
		return res, nil
	}
	// Logs are read as each test ends, before its delete policy (a
	// hook-succeeded or hook-failed pod) removes its pods.
	res.Err = e.runHookList(ctx, rel, chart.HookTest, res.Hooks, cmp.Or(req.Timeout, DefaultTimeout),
		func(h *Hook, objs []*unstructured.Unstructured, err error) {
			if err == nil && !req.Logs {
				return
			}
			for _, o := range objs {
				for _, l := range e.podLogs(ctx, kube.RefOf(o)) {
					l.Hook = h.Name
					res.Logs = append(res.Logs, l)
				}
			}
		})
	if err := store.Update(context.WithoutCancel(ctx), rel); err != nil {
		return res, fmt.Errorf("record the test run of %s: %w", rel.Name, err)
	}
	return res, nil
}

// podLogs reads the logs of a failed test: the Pod itself, or a Job's pods.
func (e *Engine) podLogs(ctx context.Context, ref kube.Ref) []PodLog {
	pods := e.client.CoreV1().Pods(ref.Namespace)
	var names []string
	switch {
	case ref.Group == "" && ref.Kind == "Pod":
		names = []string{ref.Name}
	case ref.Group == "batch" && ref.Kind == "Job":
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + ref.Name})
		if err != nil {
			return []PodLog{{Pod: ref.Name, Err: err}}
		}
		for _, p := range list.Items {
			names = append(names, p.Name)
		}
		slices.Sort(names)
	}
	var out []PodLog
	for _, name := range names {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			out = append(out, PodLog{Pod: name, Err: err})
			continue
		}
		for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
			l := PodLog{Pod: name, Container: c.Name}
			l.Log, l.Err = readLog(ctx, pods.GetLogs(name, &corev1.PodLogOptions{Container: c.Name}).Stream)
			out = append(out, l)
		}
	}
	return out
}

func readLog(ctx context.Context, open func(context.Context) (io.ReadCloser, error)) (string, error) {
	rc, err := open(ctx)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxLogBytes))
	return string(b), err
}
