package run

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
)

// forget takes the stack's label off the records of the releases removed
// blocks with destroy = false name (plan.ActionForget): the stack no
// longer manages them, and nothing else changes — no revision, no
// object. It runs before the walk, under the stack lock.
func forget(ctx context.Context, p *plan.Plan, engineFor func(cluster string) (*release.Engine, error), stack string) error {
	for _, rc := range p.Releases {
		if rc.Action != plan.ActionForget {
			continue
		}
		eng, err := engineFor(rc.Cluster)
		if err != nil {
			return err
		}
		if err := eng.Disown(ctx, rc.Namespace, rc.Name, stack); err != nil {
			return fmt.Errorf("%s: %w", rc.Addr, err)
		}
	}
	return nil
}
