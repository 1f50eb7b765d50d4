package planner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"github.com/convoy-sh/convoy/internal/stack/provenance"

	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/memo"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DefaultParallelism bounds concurrent work (renders, record reads, dry
// runs) when Input.Parallelism is 0.
//
// Measured on two cores (hack/bench/plan.sh's stack, 100 releases of which
// 20 read another's outputs): 1.24–1.51 s at 5, 1.23–1.38 s at 10,
// 1.07–1.12 s at 20. The work is mostly waiting on the API server.
const DefaultParallelism = 20

// Input is what Compute plans.
type Input struct {
	Stack *config.Stack
	// StackNamespace is the namespace of the controller's Stack that
	// plans ("": the CLI): a release another namespace's Stack wrote is
	// never taken over (ownership.go).
	StackNamespace string
	// Order is the topological order of the stack's release instances
	// (Stack.Graph().TopologicalOrder() when nil).
	Order []config.ReleaseInstanceAddr
	// Engine returns the release engine of a cluster block (nil: the
	// default cluster). It may be called concurrently.
	Engine func(ctx context.Context, cluster *config.ClusterSpec) (*release.Engine, error)
	// View returns what the plan reads of an engine's cluster: its
	// records, live objects and dry runs (clusterview.go), for a plan
	// that reads as reads says. Called once per cluster and plan. Nil:
	// the engine's own reads (the CLI and the controller);
	// planner/plannertest's in unit tests.
	View   func(eng *release.Engine, reads Reads) ClusterView
	Charts *resolve.Charts
	// Targets limit the plan to these instances (plus their dependencies
	// with IncludeDeps). A targeted plan uninstalls nothing.
	Targets []config.ReleaseInstanceAddr
	// Selectors are the -l selectors Targets came from, for the record.
	Selectors   []string
	IncludeDeps bool
	Parallelism int
	// ConfigHash is recorded in the plan (planfile.ConfigHash).
	ConfigHash string
	// Request turns a resolved release into the release engine's request.
	Request func(*resolve.Release) *release.Request
	// Outputs turns a dependency's deployed record into what expressions
	// may reference of it (revision, status, resources), reading the live
	// objects needs names through get, which are the plan's and must not
	// be modified; the others are unknown. A release whose values read
	// outputs of dependencies that this plan leaves unchanged is planned
	// with them; nil: such releases are always known only after apply.
	Outputs func(ctx context.Context, rd *release.Renderer, rel *release.Release, needs config.ResourceNeeds, get func(context.Context, kube.Ref) (*unstructured.Unstructured, error)) (config.AppliedRelease, error)
	// Destroy plans the uninstall of every release of the stack.
	Destroy bool
	// Interrupted reports whether the run with this id (release.RunLabel),
	// which left a record of the stack pending, is gone: it no longer holds
	// the stack's lock. Such records are planned as failed (Interrupted).
	// Nil: no run is known to be gone, and pending records are errors.
	Interrupted func(runID string) bool
	// Refresh says how releases are planned (RefreshIncremental by
	// default).
	Refresh Refresh
	// Stats, when not nil, counts the plan's work.
	Stats *Stats
	// Observe says how the plan records the objects of releases it proves
	// unchanged (ObserveContent by default).
	Observe Observe
	// Records lists the metadata of a namespace's release records (nil:
	// the engine lists them; records.go).
	Records RecordSource
	// Live says how the plan reads the live objects of releases it plans
	// in full (LiveLists by default).
	Live LiveReads
	// KubeVersion is the Kubernetes release the objects' APIs are checked
	// against for deprecations and removals (zero: each cluster's own).
	KubeVersion apimap.Version
	// PolicyObjects: the stack has policies over objects, which see the
	// objects of unchanged releases too: each object of a release planned
	// unchanged keeps the object as its deployed revision's manifest holds
	// it (plan.ObjectChange.Deployed). Releases proven unchanged from
	// their records then read their deployed record whole (no render, no
	// dry run).
	PolicyObjects bool
	// Attribution says whether changed fields are attributed to the
	// inputs that changed them (provenance.go; AttributeFields by
	// default).
	Attribution Attribution
	// Explain is a release whose every rendered field is traced to the
	// values leaves that set it (explain.go: convoy explain); it is
	// rendered even when its records prove it unchanged. Nil: none.
	Explain *config.ReleaseInstanceAddr
	// SkipNoOpUpgrades leaves alone a release whose only change is values
	// that render the objects and hooks its deployed revision holds (a
	// value set to the chart's default): no revision, no hooks run.
	SkipNoOpUpgrades bool
}

// LiveReads is how a plan reads the full live objects of the releases it
// plans in full (those it proves unchanged read metadata: liveApplied).
type LiveReads int

const (
	// LiveLists reads them from one list per kind and namespace, shared
	// by the plan's releases: the fewest requests when many releases are
	// planned in full (the CLI).
	LiveLists LiveReads = iota
	// LiveGets reads each object with a GET, once per plan: for plans
	// whose metadata lists come from a cache (the controller's shared
	// informers), where most releases are proven unchanged and a list of
	// a kind would read every object of the namespace for a few.
	LiveGets
)

// Observe is how a plan records the live objects of the releases it
// proves unchanged (plan.Observed), which apply compares with the cluster
// before it applies a saved plan.
type Observe int

const (
	// ObserveContent hashes the fields the revision applies of each live
	// object (ShapeHash), read from full lists. Verification then names an
	// object edited since the plan even by a manager that shares convoy's
	// (helm by default: a helm upgrade applies as "helm" too).
	ObserveContent Observe = iota
	// ObserveMetadata hashes what convoy's field manager applied of each
	// object (AppliedHash), read from lists of metadata alone: for plans
	// that are shown or applied at once, never saved.
	ObserveMetadata
)

// Refresh is how much of the stack a plan renders and dry-runs again.
type Refresh int

const (
	// RefreshIncremental renders and dry-runs a release only when
	// something its rendering depends on changed since its deployed
	// revision (fingerprint.go), or its live objects changed since they
	// were applied.
	RefreshIncremental Refresh = iota
	// RefreshFull renders and dry-runs every release.
	RefreshFull
)

// ParseRefresh accepts the --refresh values: "incremental" (or "") and
// "full".
func ParseRefresh(s string) (Refresh, error) {
	switch s {
	case "", "incremental":
		return RefreshIncremental, nil
	case "full":
		return RefreshFull, nil
	}
	return 0, fmt.Errorf("unknown refresh mode %q (want incremental or full)", s)
}

// Compute plans the stack: every selected release is resolved, rendered
// with live lookups and diffed object by object against the cluster with
// server-side dry runs, concurrently within Parallelism. It changes
// nothing. Errors name the release; sensitive values are masked in them. A
// plan that would change releases other stacks own is returned with a
// *plan.ForeignError: it can be shown, never applied.
func Compute(ctx context.Context, in Input) (*plan.Plan, error) {
	st := in.Stack
	g, diags := st.Graph()
	if diags.HasErrors() {
		return nil, errors.New(diags.Error())
	}
	order := in.Order
	if order == nil {
		if order, diags = g.TopologicalOrder(); diags.HasErrors() {
			return nil, errors.New(diags.Error())
		}
	}
	if len(in.Targets) > 0 {
		sub := g.Subgraph(in.Targets, in.IncludeDeps)
		order = slices.DeleteFunc(slices.Clone(order), func(a config.ReleaseInstanceAddr) bool { return !sub.Has(a) })
	}
	par := in.Parallelism
	if par <= 0 {
		par = DefaultParallelism
	}
	stats := in.Stats
	if stats == nil {
		stats = &Stats{}
	}
	c := &computer{in: in, sem: make(chan struct{}, par), stats: stats}
	c.plansAll = len(in.Targets) == 0 && len(order) == len(st.Releases)
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Stack: st.Name, Environment: st.Environment, ConfigHash: in.ConfigHash, CreatedAt: time.Now().UTC(), IncludeDeps: in.IncludeDeps, Destroy: in.Destroy}
	p.Selectors = in.Selectors
	for _, t := range in.Targets {
		p.Targets = append(p.Targets, t)
	}
	includedFor := includedDependencies(st, in.Targets, order)

	changes := make([]*plan.ReleaseChange, len(order))
	errs := make([]error, len(order))
	c.planned = map[config.ReleaseInstanceAddr]*plannedEntry{}
	for _, addr := range order {
		c.planned[addr] = &plannedEntry{done: make(chan struct{})}
	}
	planOne := func(i int) {
		addr := order[i]
		e := c.planned[addr]
		defer close(e.done)
		inst := st.Release(addr)
		if inst == nil {
			errs[i] = fmt.Errorf("%s: not in the stack", addr)
			return
		}
		plan := c.releaseMoved
		if in.Destroy {
			plan = c.destroy
		}
		rc, err := plan(ctx, inst)
		if rc != nil {
			rc.IncludedFor = includedFor[addr]
			if err == nil {
				err = c.deprecations(ctx, inst, rc)
			}
		}
		e.change = rc
		if err != nil {
			red := sensitive.New(resolve.SensitiveValues(inst))
			errs[i] = resolve.WithAddr(addr, red.Err(err))
			return
		}
		changes[i] = rc
	}
	// A pool of goroutines takes the releases in order. A release may wait
	// for the plans of the dependencies whose outputs it reads
	// (withOutputs); they come earlier in the topological order, so the
	// earliest release in progress never waits for one not taken yet. A
	// pool rather than a goroutine per release: each goroutine's stack
	// grows once, not once per release (6% of the CPU of a no-change plan
	// of 2,000 small releases).
	var wg sync.WaitGroup
	var next atomic.Int64
	for range min(len(order), max(2*par, 4*runtime.GOMAXPROCS(0))) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(order); i = int(next.Add(1)) - 1 {
				planOne(i)
			}
		})
	}
	var removed []*plan.ReleaseChange
	var removedErr error
	if len(in.Targets) == 0 {
		wg.Go(func() { removed, removedErr = c.removed(ctx) })
	}
	wg.Wait()
	if refusedAlready(errs, removedErr) {
		// The records of a namespace the identity may not read: the
		// release that lives there says so, once.
		removedErr = nil
	}
	if err := errors.Join(append(errs, removedErr)...); err != nil {
		return nil, err
	}
	p.Releases = append(changes, removed...)
	warnWeakSensitive(p)
	return p, p.Foreign()
}

// warnWeakSensitive warns once per plan, on the first release holding
// them, about sensitive values too short to be masked inside longer words
// (sensitive.MinSubstringLen): keys and names containing them stay
// readable, so such a value shows where it is part of a word.
func warnWeakSensitive(p *plan.Plan) {
	for _, rc := range p.Releases {
		n := sensitive.New(rc.Sensitive).Weak()
		if n == 0 {
			continue
		}
		rc.Warnings = append(rc.Warnings, fmt.Sprintf("%d sensitive %s shorter than %d characters: masked where %s alone (a whole value, a URL's user, after = or :), not inside longer words; use longer secrets",
			n, plural(n, "value is", "values are"), sensitive.MinSubstringLen, plural(n, "it stands", "they stand")))
		return
	}
}

// includedDependencies says, for each release of order that is not a
// target, which releases of order depend on it directly: why
// --include-deps brought it in.
func includedDependencies(st *config.Stack, targets, order []config.ReleaseInstanceAddr) map[config.ReleaseInstanceAddr][]config.ReleaseInstanceAddr {
	if len(targets) == 0 {
		return nil
	}
	selected := map[config.ReleaseInstanceAddr]bool{}
	for _, t := range targets {
		selected[t] = true
	}
	planned := map[config.ReleaseInstanceAddr]bool{}
	for _, a := range order {
		planned[a] = true
	}
	out := map[config.ReleaseInstanceAddr][]config.ReleaseInstanceAddr{}
	for _, a := range order {
		inst := st.Release(a)
		if inst == nil {
			continue
		}
		for _, d := range inst.DependsOn {
			if planned[d.Addr] && !selected[d.Addr] && !slices.Contains(out[d.Addr], a) {
				out[d.Addr] = append(out[d.Addr], a)
			}
		}
	}
	return out
}

// computer is one Compute run: what the plan means. How the clusters are
// read, and what is read once per plan, is the views' (clusterview.go).
type computer struct {
	in    Input
	sem   chan struct{}
	stats *Stats

	// planned are the releases of this plan, done when planned: a release
	// reading its dependencies' outputs waits for their plans.
	planned map[config.ReleaseInstanceAddr]*plannedEntry

	// predicted says which releases the plan is predicted to change
	// (records.go).
	predicted memo.Map[config.ReleaseInstanceAddr, bool]
	// views are the plan's views of its clusters (clusterview.go), by
	// kube.ClusterID: they read the records and the live objects.
	views    sync.Map
	oursOnce sync.Once
	ours     map[string]bool // stackReleases
	// outputs are the outputs of the deployed revisions that releases
	// read (a release read by many is read once).
	outputs memo.Map[outputKey, config.AppliedRelease]
	// lookups are the answers to the charts' lookups, read once per plan
	// (lookups.go).
	lookups memo.Map[lookupKey, map[string]any]
	// origins are the charts' values lines provenance read (valueorigins.go).
	origins provenance.Cache
	// orphans are the releases of the stack on a cluster that its files
	// do not declare there (rename.go).
	orphans    memo.Map[kube.ClusterID, []release.RecordKey]
	declaredOn memo.Map[kube.ClusterID, map[release.RecordKey]bool]
	// plansAll says the plan plans every release of the stack, so the
	// histories of every namespace it declares are read (readNamespaces).
	plansAll bool
}

// nsKey is a namespace of a cluster.
type nsKey struct {
	cluster   kube.ClusterID
	namespace string
}

// revisionKey is a revision of a release.
type revisionKey struct {
	nsKey
	name     string
	revision int
}

// outputKey is a revision's outputs with the objects read
// (config.ResourceNeeds.String).
type outputKey struct {
	revisionKey
	needs string
}

// objectKey is an object of a cluster.
type objectKey struct {
	cluster kube.ClusterID
	ref     kube.Ref
}

// kindKey is a kind in a namespace of a cluster.
type kindKey struct {
	nsKey
	apiVersion, kind string
}

type plannedEntry struct {
	done   chan struct{}
	change *plan.ReleaseChange // nil when planning it failed
}

// live is the live object (nil: absent) as the plan's view of rd's
// cluster reads it, a copy the caller may modify.
func (c *computer) live(ctx context.Context, rd *release.Renderer, ref kube.Ref) (*unstructured.Unstructured, error) {
	o, err := c.liveShared(ctx, rd, ref)
	if o == nil || err != nil {
		return nil, err
	}
	return o.DeepCopy(), nil
}

// liveShared is live without the copy: the object is the plan's, shared,
// and must not be modified.
func (c *computer) liveShared(ctx context.Context, rd *release.Renderer, ref kube.Ref) (*unstructured.Unstructured, error) {
	return c.view(rd).Live(ctx, ref)
}

// liveApplied is what convoy's field manager applied of the live object
// (nil: absent), as the view reads it (ClusterView.Applied).
func (c *computer) liveApplied(ctx context.Context, rd *release.Renderer, ref kube.Ref) (*kube.Applied, error) {
	return c.view(rd).Applied(ctx, ref)
}

// do runs f holding one slot of the pool.
func (c *computer) do(ctx context.Context, f func() error) error {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.sem }()
	return f()
}

func clusterName(spec *config.ClusterSpec) string {
	if spec == nil {
		return ""
	}
	return spec.Name
}

// refusedAlready says whether err is an authorizer's refusal
// (*kube.ForbiddenError) that one of errs reports already: the same list
// refused to a release's plan and to the search for removed releases.
func refusedAlready(errs []error, err error) bool {
	var fe *kube.ForbiddenError
	if err == nil || !errors.As(err, &fe) {
		return false
	}
	for _, e := range errs {
		var other *kube.ForbiddenError
		if e != nil && errors.As(e, &other) && other.Error() == fe.Error() {
			return true
		}
	}
	return false
}
