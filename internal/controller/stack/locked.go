package stack

import (
	"context"
	"errors"
	"github.com/convoy-sh/convoy/internal/run/stacklock"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"time"
)

// planFailed records a failed plan. A release left pending by a run that
// still holds the stack's lock (a CLI apply under way) is no fault: the
// Stack says Locked, naming the holder, and waits for it.
func (r *reconciler) planFailed(ctx context.Context, sr *stackRun, err error) outcome {
	var pe *release.PendingError
	if errors.As(err, &pe) {
		// The holder the plan found holding the records, even if its lock
		// expired or was released since: the next reconcile plans again.
		var le *stacklock.HeldError
		if errors.As(pe.Held, &le) {
			return r.locked(sr.st, "Plan", le)
		}
		if le, herr := sr.session.LockHolder(ctx); herr == nil && le != nil {
			return r.locked(sr.st, "Plan", le)
		}
	}
	return r.failed(sr, nil, v1alpha1.ReasonPlanFailed, err)
}

// locked records a Stack waiting for the stack lock another run holds.
func (r *reconciler) locked(st *v1alpha1.Stack, action string, le *stacklock.HeldError) outcome {
	msg := "waiting for the stack lock: " + le.Error()
	st.Status.LastError = msg
	setCond(st, v1alpha1.CondReady, metav1.ConditionFalse, v1alpha1.ReasonLocked, msg)
	r.event(st, corev1.EventTypeWarning, v1alpha1.ReasonLocked, action, msg)
	return outcome{result: "locked", requeue: 10 * time.Second}
}
