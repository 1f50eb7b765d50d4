package run

import (
	"context"
	"errors"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// stackLock is a stack's lock held by one run on every cluster the stack
// uses.
type stackLock struct {
	stack string
	// runID is the lock's id and the release.RunLabel of the records the
	// run writes.
	runID string
	opts  Options
	held  []heldLock
}

type heldLock struct {
	cluster Connected
	lock    *stacklock.Lock
}

// lockStack takes the stack's lock on every cluster it uses, or none.
// Locks of holders that are gone are taken over, and o.Announce is told.
func lockStack(ctx context.Context, o Options, st *config.Stack, cl *Clusters, command string) (*stackLock, error) {
	clusters, err := cl.Stack(ctx, st)
	if err != nil {
		return nil, err
	}
	sl := &stackLock{stack: o.lockKey(st), runID: stacklock.NewRunID(), opts: o}
	for _, c := range clusters {
		announce := o.announce
		if len(clusters) > 1 {
			announce = func(msg string) { o.announce(c.Describe() + ": " + msg) }
		}
		l, err := stacklock.Acquire(ctx, c.Engine.LockClient(), sl.stack, stacklock.Options{Command: command, RunID: sl.runID, Announce: announce, Environment: st.Environment, Timing: o.LockTiming})
		if err != nil {
			return nil, errors.Join(err, sl.release(ctx))
		}
		sl.held = append(sl.held, heldLock{cluster: c, lock: l})
	}
	return sl, nil
}

// fence is ctx for the run's work under the lock: it carries the fence
// the release engine consults before each record write and each change of
// objects (held), and it is cancelled, with the *LockLostError as its
// cause, once the lock is lost on any cluster, so that waits stop too.
// stop ends the watch.
func (s *stackLock) fence(ctx context.Context) (fenced context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(release.WithFence(ctx, s.holds))
	done := make(chan struct{})
	for _, h := range s.held {
		go func() {
			select {
			case <-h.lock.Lost():
				cancel(h.lock.LostErr())
			case <-done:
			}
		}()
	}
	return ctx, func() { close(done); cancel(nil) }
}

// holds is nil while the run holds the lock on every cluster (Lock.Held).
func (s *stackLock) holds(ctx context.Context) error {
	for _, h := range s.held {
		if err := h.lock.Held(ctx); err != nil {
			return err
		}
	}
	return nil
}

// holdsOn is the fence of the writes to one cluster: nil while the run
// holds the lock there. The lock of another cluster is not consulted: a
// run that takes the stack over takes the lock of each cluster before it
// writes there. A lock lost on any cluster still stops every write
// (fence: the run's context is cancelled).
func (s *stackLock) holdsOn(id kube.ClusterID) release.Fence {
	for _, h := range s.held {
		if h.cluster.Engine.Kube().ClusterID() == id {
			return h.lock.Held
		}
	}
	return s.holds // not a cluster of the stack's: all of them
}

// lost is the *LockLostError of a cluster whose lock the run lost (nil:
// none known).
func (s *stackLock) lost() error {
	for _, h := range s.held {
		if err := h.lock.LostErr(); err != nil {
			return err
		}
	}
	return nil
}

// finish ends a run under the lock: when the run lost it, the loss heads
// its error (unless err says so already); then the lock is released (if
// still the run's).
func (s *stackLock) finish(ctx context.Context, err error) error {
	var lost *stacklock.LostError
	if l := s.lost(); l != nil && !errors.As(err, &lost) {
		err = errors.Join(l, err)
	}
	return errors.Join(err, s.release(ctx))
}

// release gives the lock up on every cluster, retrying for the run's
// grace period. What could not be released is an *UnlockError each.
func (s *stackLock) release(ctx context.Context) error {
	var errs []error
	for _, h := range s.held {
		if err := h.lock.Release(ctx, s.opts.Grace); err != nil {
			errs = append(errs, &UnlockError{Stack: s.stack, Cluster: h.cluster.Describe(), LockID: s.runID, Err: err})
		}
	}
	s.held = nil
	return errors.Join(errs...)
}

// UnlockError says a run could not release the stack's lock on a cluster.
// The lock stays until it expires or is taken over, and says how.
type UnlockError struct {
	Stack, Cluster, LockID string
	Err                    error
}

func (e *UnlockError) Error() string {
	return fmt.Sprintf("the lock of stack %q on %s was not released (%v): a run on this host takes it over once this process has ended, any other once it expires (%s); `convoy force-unlock %s` releases it now",
		e.Stack, e.Cluster, e.Err, stacklock.Duration, e.LockID)
}

func (e *UnlockError) Unwrap() error { return e.Err }
