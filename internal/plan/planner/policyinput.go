package planner

import (
	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
)

// valuesBefore are the values the deployed revision was rendered with
// (its chart's defaults merged with its user values), masked, for policies
// (plan.ReleaseChange.ValuesBefore). Nil when nothing is deployed; the
// user values alone when its chart's dependencies no longer coalesce.
func valuesBefore(deployed *release.Release, red *sensitive.Redactor) map[string]any {
	if deployed == nil {
		return nil
	}
	values := deployed.Config
	if deployed.Chart != nil {
		if merged, err := chart.CoalesceValues(deployed.Chart, deployed.Config); err == nil {
			values = merged
		}
	}
	return plan.MaskValueTree(values, red)
}
