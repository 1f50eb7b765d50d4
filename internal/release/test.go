package release

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRequest runs a release's test hooks (helm test).
type TestRequest struct {
	Name      string
	Namespace string
	// Timeout bounds each test hook's wait; 0 means DefaultTimeout.
	Timeout time.Duration
}

// TestResult is what a test run did: the release record with the test
// hooks' last runs updated, and, when a test failed, the logs of its pods.
type TestResult struct {
	Release *Release
	// Hooks are the release's test hooks in the order they ran (or would
	// have: those after a failure keep their previous last run).
	Hooks []*Hook
	// Err is the failed test (a *HookError), nil when every test passed.
	Err error
	// Logs are the failed test's pods' container logs.
	Logs []PodLog
}

// PodLog is one container's log, or why it could not be read.
type PodLog struct {
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
	for _, h := range rel.Hooks {
		if slices.Contains(h.Events, chart.HookTest) {
			res.Hooks = append(res.Hooks, h)
		}
	}
	slices.SortStableFunc(res.Hooks, hookOrder)
	if len(res.Hooks) == 0 {
		return res, nil
	}
	res.Err = e.runHooks(ctx, rel, chart.HookTest, cmp.Or(req.Timeout, DefaultTimeout))
	var he *HookError
	if errors.As(res.Err, &he) && he.Ref.Name != "" {
		res.Logs = e.podLogs(ctx, he.Ref)
	}
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
		for _, c := range pod.Spec.Containers {
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
