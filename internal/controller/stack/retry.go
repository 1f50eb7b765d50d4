package stack

import (
	"fmt"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/plan"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Retry defaults (spec.retry).
const (
	DefaultRetryAttempts = 3
	DefaultRetryBackoff  = 30 * time.Second
)

// retryPolicy is the Stack's spec.retry with its defaults: how many times
// a failed apply is tried again, and the first wait.
func retryPolicy(spec *v1alpha1.StackSpec) (attempts int, backoff time.Duration) {
	attempts, backoff = DefaultRetryAttempts, DefaultRetryBackoff
	if r := spec.Retry; r != nil {
		if r.Attempts != nil {
			attempts = max(int(*r.Attempts), 0)
		}
		if r.Backoff != nil && r.Backoff.Duration > 0 {
			backoff = r.Backoff.Duration
		}
	}
	return attempts, backoff
}

// retryDelay is the wait after the n-th failure (n ≥ 1): backoff doubled
// n-1 times, capped at the interval.
func retryDelay(backoff, interval time.Duration, n int) time.Duration {
	d := backoff
	for i := 1; i < n && d < interval; i++ {
		d *= 2
	}
	return min(d, interval)
}

// retryKey identifies what failed applies are counted against: the
// inputs (source digest, variable values, environment, kubeconfigs) and
// the spec's generation. A change of any starts the count again.
func retryKey(sr *stackRun) string {
	return fmt.Sprintf("%s/%d", sr.in.hash, sr.st.Generation)
}

func clearRetries(st *v1alpha1.Stack) {
	st.Status.Failures, st.Status.FailedInputs, st.Status.NextRetryTime = 0, "", nil
}

// applyFailed records an apply that ran and failed: it is tried again,
// with the plan that failed while it is not stale, after a backoff that
// doubles up to the interval; after spec.retry.attempts retries the Stack
// stalls until its source, variables or spec change.
func (r *reconciler) applyFailed(sr *stackRun, p *plan.Plan, digest string, err error) outcome {
	st := sr.st
	st.Status.LastFailedPlan = digest
	msg := message(err, p, sr.in)
	if key := retryKey(sr); st.Status.FailedInputs != key {
		clearRetries(st)
		st.Status.FailedInputs = key
	}
	st.Status.Failures++
	st.Status.LastError = msg
	attempts, backoff := retryPolicy(&st.Spec)
	n := int(st.Status.Failures)
	if n > attempts {
		// Not tried again: the plan counts as applied (its failed releases
		// are in status.releases), and the Stack waits for a change.
		st.Status.LastAppliedPlan = digest
		st.Status.NextRetryTime = nil
		return r.stall(st, v1alpha1.ReasonApplyFailed, fmt.Sprintf("apply of plan %s failed %d times (spec.retry.attempts is %d): not tried again until the source, the variables or the spec change: %s",
			digest, n, attempts, msg))
	}
	wait := retryDelay(backoff, r.interval(st), n)
	st.Status.NextRetryTime = &metav1.Time{Time: time.Now().Add(wait)}
	full := fmt.Sprintf("apply of plan %s failed (attempt %d of %d), tried again in %s: %s", digest, n, attempts+1, wait, msg)
	retrying(st, v1alpha1.ReasonApplyFailed, full)
	r.event(st, corev1.EventTypeWarning, v1alpha1.ReasonApplyFailed, "Apply", full)
	return outcome{result: "error", requeue: wait}
}

// retryGate holds a Stack whose apply failed: until its next retry is
// due, or, retries exhausted, until its inputs or spec change (then the
// count starts again).
func (r *reconciler) retryGate(sr *stackRun) (outcome, bool) {
	st := sr.st
	if st.Status.Failures == 0 {
		return outcome{}, false
	}
	if st.Status.FailedInputs != retryKey(sr) {
		clearRetries(st)
		return outcome{}, false
	}
	attempts, _ := retryPolicy(&st.Spec)
	interval := r.interval(st)
	if int(st.Status.Failures) > attempts {
		return outcome{result: "stalled", requeue: interval}, true
	}
	if next := st.Status.NextRetryTime; next != nil && time.Until(next.Time) > 0 {
		return outcome{result: "retry_wait", requeue: time.Until(next.Time)}, true
	}
	return outcome{}, false
}

// intervalBackoff is the controller's rate limiter of failed reconciles:
// controller-runtime's, with each Stack's wait capped at its interval, so
// that a source or plan failure is looked at again at least as often as
// a healthy Stack is planned.
type intervalBackoff struct {
	workqueue.TypedRateLimiter[reconcile.Request]
	caps sync.Map // reconcile.Request → time.Duration
}

func newIntervalBackoff() *intervalBackoff {
	return &intervalBackoff{TypedRateLimiter: workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]()}
}

// When is the wait before a failed Stack's next reconcile.
func (b *intervalBackoff) When(req reconcile.Request) time.Duration {
	d := b.TypedRateLimiter.When(req)
	if c, ok := b.caps.Load(req); ok && d > c.(time.Duration) {
		return c.(time.Duration)
	}
	return d
}

func (b *intervalBackoff) capAt(req reconcile.Request, d time.Duration) {
	b.caps.Store(req, d)
}

func (b *intervalBackoff) forget(req reconcile.Request) {
	b.caps.Delete(req)
	b.Forget(req)
}
