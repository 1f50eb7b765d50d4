package run

import (
	"context"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
)

// PlanRequest says what to plan.
type PlanRequest struct {
	// Targets limit the plan to these release addresses (plus their
	// dependencies with IncludeDeps).
	Targets []string
	// Selectors (-l tier=api,env!=dev) add the releases whose labels they
	// match to the targets.
	Selectors   []string
	IncludeDeps bool
	// Destroy plans the uninstall of every release of the stack.
	Destroy bool
	// IncludeDependents: a destroy of targets also uninstalls the
	// releases that depend on them (else the plan names them, and what
	// they read of the targets).
	IncludeDependents bool
	// Refresh: incremental (default) or full (planner.Refresh).
	Refresh planner.Refresh
	// Stats, when not nil, counts the plan's work.
	Stats *planner.Stats
	// AllowPolicies are policies whose denials this plan overrides
	// (--allow-policy): they become warnings, and the plan and the release
	// records it deploys name them. For a saved plan, they add to the ones
	// it was made with.
	AllowPolicies []string
	// Observe: how releases proven unchanged record their objects
	// (planner.Observe; ObserveContent, what saved plans need, by
	// default).
	Observe Observe
	// Attribution: whether changed fields are attributed to the inputs
	// that changed them (planner.AttributeFields, the default).
	Attribution planner.Attribution
	// Explain: the plan targets one release (Targets), and every field
	// it renders is traced to the values leaves it depends on
	// (plan.ReleaseChange.Explained; convoy explain).
	Explain bool
	// SkipNoOpUpgrades leaves alone releases whose only change is values
	// that render what their deployed revision holds
	// (planner.Input.SkipNoOpUpgrades).
	SkipNoOpUpgrades bool
	// Lists, when ListShared, has this plan take its metadata lists from
	// the shared informers of the run's Connections (the controller's
	// plans, but right after an apply); zero: as ClusterOptions.Lists
	// says.
	Lists ListMode
	// pinned are charts that replace the source of release instances (a
	// promotion's, Promote).
	pinned map[config.ReleaseInstanceAddr]*chart.Chart
}

// Planned is a computed plan with the stack it was computed from.
type Planned struct {
	Loaded *Loaded
	Plan   *plan.Plan
	// clusters are the clusters the plan observed (for a saved plan).
	clusters []Connected
}

// planOn plans a loaded stack on the clusters cl connects (o is
// forStack'd). Errors are as Plan's.
func planOn(ctx context.Context, o Options, ls *Loaded, cl *Clusters, req PlanRequest) (*Planned, error) {
	clusters, err := cl.Stack(ctx, ls.Stack)
	if err != nil {
		return nil, err
	}
	if db := cl.records(); db != nil && req.Stats != nil {
		// The queries of this plan, not of opening the database.
		start := db.Queries()
		defer func() { req.Stats.SQLQueries.Add(db.Queries() - start) }()
	}
	if err := ls.keepMovedNames(ctx, cl); err != nil {
		return nil, err
	}
	holders := readHolders(ctx, clusters, o.lockKey(ls.Stack))
	p, err := computePlan(ctx, o, ls, cl, req, holders.gone(), holders)
	if p == nil {
		return nil, err
	}
	return &Planned{Loaded: ls, Plan: p, clusters: clusters}, err
}

// computePlan plans a loaded stack on connected clusters. interrupted
// says which runs that left records of the stack pending are gone
// (planner.Input.Interrupted), by the live holders of the stack's locks
// (nil: unknown, or this run holds the lock). A plan that would change
// releases other stacks own is returned with a *plan.ForeignError.
func computePlan(ctx context.Context, o Options, ls *Loaded, cl *Clusters, req PlanRequest, interrupted func(string) bool, holders lockHolders) (*plan.Plan, error) {
	st := ls.Stack
	targets, diags := st.Selection(req.Targets, req.Selectors)
	if err := diagError(diags, ls.Config); err != nil {
		return nil, err
	}
	connected, err := cl.Stack(ctx, st)
	if err != nil {
		return nil, err
	}
	if err := checkAllowed(ls, req.AllowPolicies); err != nil {
		return nil, err
	}
	hash, err := ls.ConfigHash()
	if err != nil {
		return nil, err
	}
	var scoped *targetedDestroy
	if req.Destroy && len(targets) > 0 {
		scoped, targets = newTargetedDestroy(st, targets, req.IncludeDeps, req.IncludeDependents)
	}
	charts := o.charts()
	if req.pinned != nil {
		charts = charts.WithPinned(req.pinned)
	}
	p, err := planner.Compute(ctx, planner.Input{
		Stack:            st,
		StackNamespace:   o.StackNamespace,
		Order:            ls.Order,
		Engine:           cl.Engine,
		Charts:           charts,
		Targets:          targets,
		Selectors:        req.Selectors,
		IncludeDeps:      req.IncludeDeps,
		Parallelism:      o.parallelism(),
		ConfigHash:       hash,
		Destroy:          req.Destroy,
		Interrupted:      interrupted,
		Refresh:          req.Refresh,
		Stats:            req.Stats,
		Observe:          req.Observe,
		Attribution:      req.Attribution,
		Explain:          explained(req, targets),
		Live:             o.liveReads(),
		SkipNoOpUpgrades: req.SkipNoOpUpgrades,
		KubeVersion:      o.kubeTarget(st),
		// Policies over objects see the objects of unchanged releases too.
		PolicyObjects: ls.Policies.ReadsObjects(),
		Request: func(r *resolve.Release) *release.Request {
			return ls.releaseRequest(o, st.ID(), r)
		},
		Outputs: OutputsFrom,
	})
	if p == nil {
		nameRunning(ctx, connected, o.lockKey(st), holders, err)
		return nil, releaseDiagnostics(ls, charts, err)
	}
	scoped.note(p)
	ls.noteMoves(p)
	if perr := evaluatePolicies(ctx, ls, p, req.AllowPolicies); perr != nil {
		return nil, perr
	}
	return p, err
}

// Traffic counts the requests of a run's clients (ClusterOptions.Traffic).
type Traffic = kube.Traffic

// Timings sum the time a run's releases spend in hooks and record writes
// (ClusterOptions.Timings).
type Timings = release.Timings

// What the commands choose of a plan's computation, under the names they
// know (cmd/convoy reaches the planner only through the run).
type (
	// Refresh is how much of the stack a plan renders and dry-runs again.
	Refresh = planner.Refresh
	// Stats counts a plan's work (--stats).
	Stats = planner.Stats
	// Observe is how a plan records the objects of releases it proves
	// unchanged.
	Observe = planner.Observe
)

// The Observe modes: ObserveContent for plans that are saved (and verified
// before they are applied), ObserveMetadata for those that are not.
const (
	ObserveContent  = planner.ObserveContent
	ObserveMetadata = planner.ObserveMetadata
)

// DefaultPlanParallelism bounds a plan's concurrent renders, record reads
// and dry runs.
const DefaultPlanParallelism = planner.DefaultParallelism

// explained is the release a plan request explains: its one target.
func explained(req PlanRequest, targets []config.ReleaseInstanceAddr) *config.ReleaseInstanceAddr {
	if !req.Explain || len(targets) != 1 {
		return nil
	}
	return &targets[0]
}

// Attribution says whether a plan names the inputs of each changed
// field (planner.Attribution).
type Attribution = planner.Attribution

// AttributeNone plans without attributing changed fields.
const AttributeNone = planner.AttributeNone

// ParseRefresh accepts the --refresh values: "incremental" (or "") and
// "full".
func ParseRefresh(s string) (Refresh, error) { return planner.ParseRefresh(s) }

// liveReads is how plans read the full live objects of releases planned
// in full: a GET each when their metadata lists come from shared
// informers (most releases are then proven unchanged without a request),
// else one list per kind and namespace.
func (o Options) liveReads() planner.LiveReads {
	if o.Clusters.Lists == ListShared && o.Clusters.Connections != nil {
		return planner.LiveGets
	}
	return planner.LiveLists
}
