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

// goneRuns says, for a plan that holds no lock, which runs that left
// records pending are gone: all but the holders of the stack's locks that
// may still be alive. Nil when the locks cannot be read.
func goneRuns(ctx context.Context, clusters []Connected, stack string) func(string) bool {
	live := map[string]bool{}
	for _, c := range clusters {
		l, err := c.Engine.LockClient().CoordinationV1().Leases(stacklock.Namespace).Get(ctx, stacklock.Name(stack), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil
		}
		if le := stacklock.Holder(stack, l); le != nil {
			live[le.LockID] = true
		}
	}
	return func(id string) bool { return !live[id] }
}

// nameRunning names, in each *release.PendingError of err whose record the
// live holder of the stack's lock wrote, that run: a plan made during an
// apply says which apply holds the releases, rather than suggesting to
// recover them.
func nameRunning(ctx context.Context, clusters []Connected, stack string, err error) {
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
	holders := map[string]*stacklock.HeldError{}
	for _, c := range clusters {
		l, err := c.Engine.LockClient().CoordinationV1().Leases(stacklock.Namespace).Get(ctx, stacklock.Name(stack), metav1.GetOptions{})
		if err != nil {
			continue
		}
		if le := stacklock.Holder(stack, l); le != nil {
			holders[le.LockID] = le
		}
	}
	for _, pe := range pending {
		if le := holders[pe.RunID]; le != nil {
			pe.Running = fmt.Sprintf("%s (run %s, %s) has held stack %q since %s", cmp.Or(le.Command, "a convoy run"), le.LockID, le.Holder, stack, le.Since.Format(time.RFC3339))
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
