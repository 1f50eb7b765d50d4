package run

import (
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/resolve"
)

// Options are what every operation on a stack is given: where the stack is,
// how to reach its clusters, and how much to do at once.
type Options struct {
	Source   Source
	Clusters ClusterOptions
	// ChartCache is the chart cache directory that repository and
	// registry charts are read from ("" is fine for local charts only).
	ChartCache string
	// Parallelism bounds the releases planned or applied at once (0: the
	// default).
	Parallelism int
}

func (o Options) parallelism() int {
	if o.Parallelism > 0 {
		return o.Parallelism
	}
	return plan.DefaultParallelism
}

func (o Options) charts() *resolve.Charts { return resolve.NewCharts(o.ChartCache) }
