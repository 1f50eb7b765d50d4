package release

import (
	"context"
	"errors"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// DefaultGrace is how long writing a release's final state may go on after
// the operation's context ended (Ctrl-C, a deadline).
const DefaultGrace = 30 * time.Second

// attemptTimeout bounds one write: a stalled API server does not answer
// at all, and a client without a timeout would wait forever.
const attemptTimeout = 5 * time.Second

// Retry runs op until it succeeds or fails for good, with backoff, for at
// most grace (0: DefaultGrace), whether or not ctx ends meanwhile: what
// must be written (a release's final state, a lock's release) is written
// after an interruption too, within a bound. Each attempt gets at most a
// few seconds. The error is the last attempt's.
func Retry(ctx context.Context, grace time.Duration, op func(context.Context) error) error {
	if grace <= 0 {
		grace = DefaultGrace
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	delay := 200 * time.Millisecond
	var last error
	for {
		actx, acancel := context.WithTimeout(wctx, attemptTimeout)
		err := op(actx)
		acancel()
		switch {
		case err == nil:
			return nil
		case wctx.Err() != nil && last != nil:
			return last // cut short by the end of the grace period
		case !Transient(err):
			return err
		}
		last = err
		select {
		case <-wctx.Done():
			return last
		case <-time.After(delay):
		}
		delay = min(2*delay, 3*time.Second)
	}
}

// Transient reports whether err may go away when the request is sent
// again: the API server was unreachable (not for longer than the run's
// bound, kube.UnreachableError), slow or overloaded. An answer
// about the request itself (not found, exists, conflict, invalid,
// forbidden) is final.
func Transient(err error) bool {
	switch {
	case err == nil, errors.Is(err, ErrReleaseNotFound), errors.Is(err, ErrReleaseExists), errors.Is(err, context.Canceled),
		errors.Is(err, ErrNotHeld), errors.Is(err, ErrRecordChanged):
		return false
	case errors.As(err, new(*kube.UnreachableError)):
		return false // unreachable for longer than the run allows
	case apierrors.IsNotFound(err), apierrors.IsAlreadyExists(err), apierrors.IsConflict(err), apierrors.IsInvalid(err),
		apierrors.IsForbidden(err), apierrors.IsUnauthorized(err), apierrors.IsBadRequest(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsRequestEntityTooLargeError(err), apierrors.IsGone(err):
		return false
	}
	return true
}
