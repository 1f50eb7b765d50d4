package run

import (
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
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
	// Announce is told what a run did on its own that people should know
	// though nothing failed: the lock of a holder that is gone taken over,
	// a record an interrupted run left pending marked failed (nil: nobody).
	Announce func(string)
	// Grace bounds how long writing a release's final state and releasing
	// the stack lock may go on after the run's context ended, retrying
	// (0: stacklock.DefaultGrace).
	Grace time.Duration
	// LockTiming is the stack lock's (zero: stacklock.Duration, renewed every
	// third of it); tests shorten it.
	LockTiming stacklock.Timing
	// StackNamespace is the namespace of the controller's Stack object
	// that runs the stack ("": the CLI). Its records carry it
	// (release.StackNamespaceLabel), and the plan refuses to take over
	// releases another namespace's Stack wrote (planner.Input).
	StackNamespace string
	// IdentityNamespace scopes the stack's identity, and so its lock, to
	// the namespace of the controller's Stack that runs it ("": the
	// stack's ID alone, as the CLI's): Stacks of two namespaces whose
	// artifacts name one stack are then two stacks (stacklock.Identity).
	IdentityNamespace string
	// APIMap adds to and overrides convoy's table of removed APIs and the
	// stack's api_map (--api-map): stored revisions naming them are read
	// as their successors (apis.go).
	APIMap *apimap.Map
	// KubeVersion is the Kubernetes release plans check the objects' API
	// versions against (--kube-version; zero: the stack's kube_version,
	// else each cluster's own).
	KubeVersion apimap.Version
}

// lockKey is the key of the stack's lock (stacklock.Identity.Key): its
// ID, scoped to o.IdentityNamespace.
func (o Options) lockKey(st *config.Stack) string {
	return stacklock.Identity{Namespace: o.IdentityNamespace, Stack: st.ID()}.Key()
}

// announce tells o.Announce, if any.
func (o Options) announce(msg string) {
	if o.Announce != nil {
		o.Announce(msg)
	}
}

// newClusters connects the run's clusters; their engines report steps to
// observer (nil: o.Clusters.Observer).
func (o Options) newClusters(observer func(release.Event)) *Clusters {
	c := o.Clusters
	if observer != nil {
		c.Observer = observer
	}
	c.grace = o.Grace
	if c.apis == nil && o.APIMap != nil {
		c.apis = apimap.Kubernetes().With(o.APIMap)
	}
	return connectClusters(c)
}

func (o Options) parallelism() int {
	if o.Parallelism > 0 {
		return o.Parallelism
	}
	return planner.DefaultParallelism
}

func (o Options) charts() *resolve.Charts { return resolve.NewCharts(o.ChartCache) }
