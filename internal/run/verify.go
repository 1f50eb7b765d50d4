package run

import (
	"context"
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
)

// StaleError says why a saved plan may not be applied: what changed since
// it was computed.
type StaleError struct {
	Changes []string
}

func (e *StaleError) Error() string {
	return "the saved plan is stale, run convoy plan again:\n  - " + strings.Join(e.Changes, "\n  - ")
}

// VerifyObserved checks a saved plan's observations against the clusters
// as they are now (engineFor returns a cluster block's release engine):
// planner.Verify through a planner.VerifyView of each cluster, read
// afresh. What moved is a *StaleError naming every change, each once.
func VerifyObserved(ctx context.Context, p *plan.Plan, engineFor func(cluster string) (*release.Engine, error)) error {
	views := map[string]planner.VerifyCluster{} // one per cluster block: Prefetch counts for Applied

	moved, err := planner.Verify(ctx, p, func(cluster string) (planner.VerifyCluster, error) {
		if c, ok := views[cluster]; ok {
			return c, nil
		}
		eng, err := engineFor(cluster)
		if err != nil {
			return planner.VerifyCluster{}, err
		}
		c := planner.VerifyCluster{View: planner.VerifyView(eng), Renderer: eng.Renderer}
		views[cluster] = c
		return c, nil
	})
	if err != nil {
		return err
	}
	if len(moved) > 0 {
		return &StaleError{Changes: moved}
	}
	return nil
}
