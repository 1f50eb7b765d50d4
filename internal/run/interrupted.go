package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// heldBy says, for a run holding the stack lock as runID, which runs that
// left records of the stack pending are gone: every other one, since the
// lock is exclusive.
func heldBy(runID string) func(string) bool {
	return func(id string) bool { return id != runID }
}

// lockHolders are the live holders of a stack's locks on its clusters, by
// run id, as read once (nil when a lock could not be read).
type lockHolders map[string]*stacklock.HeldError

// readHolders reads the live holders of the stack's locks.
func readHolders(ctx context.Context, clusters []Connected, stack string) lockHolders {
	live := lockHolders{}
	for _, c := range clusters {
		l, err := c.Engine.LockClient().CoordinationV1().Leases(stacklock.Namespace).Get(ctx, stacklock.Name(stack), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil
		}
		if le := stacklock.Holder(stack, l); le != nil {
			live[le.LockID] = le
		}
	}
	return live
}

// gone says, for a plan that holds no lock, which runs that left records
// pending are gone: all but the live holders of the stack's locks. Nil
// when the locks could not be read.
func (h lockHolders) gone() func(string) bool {
	if h == nil {
		return nil
	}
	return func(id string) bool { return h[id] == nil }
}

// nameRunning names, in each *release.PendingError of err whose record a
// live holder of the stack's lock wrote, that run (Running, Held): a plan
// made during an apply says which apply holds the releases, rather than
// suggesting to recover them. The holders are those the plan judged the
// records by (known, read as it began), so that a lock that expires or is
// released while the plan runs does not turn the records it found held
// into a fault; runs it did not know of are looked up now.
func nameRunning(ctx context.Context, clusters []Connected, stack string, known lockHolders, err error) {
	var pending []*release.PendingError
	for _, e := range joinedErrors(err) {
		var pe *release.PendingError
		if errors.As(e, &pe) && pe.RunID != "" {
			pending = append(pending, pe)
		}
	}
	if len(pending) == 0 {
		return
	}
	var now lockHolders
	for _, pe := range pending {
		le := known[pe.RunID]
		if le == nil {
			if now == nil {
				now = readHolders(ctx, clusters, stack)
			}
			le = now[pe.RunID]
		}
		if le != nil {
			pe.Running = fmt.Sprintf("%s (run %s, %s) has held stack %q since %s", cmp.Or(le.Command, "a convoy run"), le.LockID, le.Holder, stack, le.Since.Format(time.RFC3339))
			pe.Held = le
		}
	}
}

// healInterrupted marks failed every record of the plan that a run of the
// stack that is gone left pending, before anything else is applied. The
// caller holds the stack lock as runID.
func healInterrupted(ctx context.Context, o Options, p *plan.Plan, engineFor func(string) (*release.Engine, error), runID string) error {
	for _, rc := range p.Releases {
		i := rc.Interrupted
		if i == nil {
			continue
		}
		eng, err := engineFor(rc.Cluster)
		if err != nil {
			return err
		}
		if _, err := eng.RecoverInterrupted(ctx, rc.Name, rc.Namespace, i.Revision, i.RunID, runID); err != nil {
			return fmt.Errorf("%s: %w", rc.Addr, err)
		}
		o.announce(fmt.Sprintf("%s: revision %d, left %s by interrupted run %s, is now failed", rc.Addr, i.Revision, i.Status, i.RunID))
	}
	return nil
}
