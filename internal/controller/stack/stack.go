package stack

import (
	"cmp"
	"context"
	"io"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/controller/notify"
	"github.com/convoy-sh/convoy/internal/controller/pipeline"
	"github.com/convoy-sh/convoy/internal/controller/planstore"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Options are the controller's settings a Stack reads (the flags of
// `convoy controller`, as the manager's Options).
type Options struct {
	// Kubeconfig, Context, QPS and Burst reach the clusters of Stacks
	// that name none (the controller's own).
	Kubeconfig, Context string
	QPS                 float32
	Burst               int
	Shard               string
	Namespace           string
	Parallelism         int
	MaxPlanSize         int64
	CacheDir            string
	Warnings            io.Writer
	MinInterval         time.Duration
	// DefaultServiceAccount, NoCrossNamespaceRefs and Tenancy: tenancy.go.
	DefaultServiceAccount string
	NoCrossNamespaceRefs  bool
	Tenancy               Tenancy
}

// ValidateTenancy checks the tenancy options before the controller
// starts.
func (o Options) ValidateTenancy() error { return o.validateTenancy() }

// RefusesCrossNamespaceRefs: references to other namespaces are refused
// (--no-cross-namespace-refs, or --tenancy strict).
func (o Options) RefusesCrossNamespaceRefs() bool { return o.noCrossNamespaceRefs() }

// IntervalFloor is --min-interval, DefaultMinInterval unless set.
func (o Options) IntervalFloor() time.Duration { return o.minInterval() }

// ShardSelector selects the Stacks of a shard ("": those of no shard).
func ShardSelector(shard string) (labels.Selector, error) { return shardSelector(shard) }

// shardSelector selects the Stacks of a shard.
func shardSelector(shard string) (labels.Selector, error) {
	op, vals := selection.DoesNotExist, []string(nil)
	if shard != "" {
		op, vals = selection.Equals, []string{shard}
	}
	req, err := labels.NewRequirement(v1alpha1.ShardLabel, op, vals)
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*req), nil
}

// maxPlanSize bounds a saved plan (--max-plan-size).
func (o Options) maxPlanSize() int { return int(cmp.Or(o.MaxPlanSize, planstore.DefaultMaxPlanSize)) }

// Cache is the manager's cache janitor: it holds a pulled stack (and its
// charts) until release, and evicts past its size.
type Cache interface {
	Hold(f *artifact.Fetched) (release func(), ok bool)
	Evict()
}

// Pushes are the pushes the push receiver was told of.
type Pushes interface {
	// Awaited is the digest pushed to the Stack's tag that its last
	// reconcile has not seen yet ("": none).
	Awaited(st *v1alpha1.Stack) string
}

// Deps are what the manager hands the Stack reconciler.
type Deps struct {
	// Client reads Stacks from the cache and writes; Reader reads
	// uncached (Secrets, ConfigMaps).
	Client client.Client
	Reader client.Reader
	// Config and Mapper make the clients of the service accounts Stacks
	// act as.
	Config *rest.Config
	Mapper meta.RESTMapper
	Scheme *runtime.Scheme
	Events events.EventRecorder
	// Notifier sends the Stacks' notifications (nil: not sent).
	Notifier *notify.Notifier
	// Resolver is the chart resolver, shared with the Pipelines.
	Resolver *source.Resolver
	Cache    Cache
	// Pushes (nil: no push receiver).
	Pushes  Pushes
	Options Options
	// ClusterQPS and ClusterBurst bound every Stack run's requests
	// together.
	ClusterQPS   float32
	ClusterBurst int
}

// Reconciler is the Stack reconciler.
type Reconciler struct{ r *reconciler }

// pushRetry is how soon a Stack looks again for a push its registry does
// not serve under the tag yet.
const pushRetry = pipeline.PushRetry

// New is the Stack reconciler.
func New(d Deps) *Reconciler {
	r := &reconciler{
		client:   d.Client,
		reader:   d.Reader,
		scheme:   d.Scheme,
		events:   d.Events,
		opts:     d.Options,
		metrics:  newMetrics(),
		registry: artifact.Registry{Resolver: d.Resolver},
		resolver: d.Resolver,
		backoff:  newIntervalBackoff(),
		budget:   &kube.Budget{QPS: float64(d.ClusterQPS), Burst: d.ClusterBurst},
		notifier: d.Notifier,
		cache:    d.Cache,
		pushes:   d.Pushes,
	}
	r.budget.OnWait = r.metrics.budgetWaits.Inc
	r.traffic = &kube.Traffic{OnRequest: func(verb string) { r.metrics.kubeRequests.WithLabelValues(verb).Inc() }}
	r.conns = &run.Connections{OnConnect: r.metrics.connections.Inc}
	r.chartProofs = &source.Proofs{OnCheck: r.metrics.chartChecks.Inc}
	r.readers = &stackReaders{cfg: d.Config, scheme: d.Scheme, mapper: d.Mapper, own: d.Reader}
	return &Reconciler{r}
}

// Reconcile observes the Stack, decides, acts, and records its status.
func (x *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return x.r.Reconcile(ctx, req)
}

// RateLimiter requeues a failing Stack with backoff, at most its interval
// apart.
func (x *Reconciler) RateLimiter() workqueue.TypedRateLimiter[reconcile.Request] { return x.r.backoff }

// SameIdentity maps a deleted Stack to the Stacks with its identity: a
// duplicate takes over when the first is gone.
func (x *Reconciler) SameIdentity(ctx context.Context, obj client.Object) []reconcile.Request {
	return x.r.sameIdentity(ctx, obj)
}

// PipelineStacks is what a Pipeline needs of the Stack side.
func (x *Reconciler) PipelineStacks() pipeline.Stacks { return pipelineStacks{x.r} }

// WebhookReceipt counts one of the push receiver's notifications by
// result.
func (x *Reconciler) WebhookReceipt(result string) {
	x.r.metrics.webhookReceipts.WithLabelValues(result).Inc()
}

// Evicted counts n cache entries the janitor removed.
func (x *Reconciler) Evicted(n int) { x.r.metrics.evictions.Add(float64(n)) }

// Drain waits for the applies and destroys under way, at most timeout,
// and says how many are left.
func (x *Reconciler) Drain(timeout time.Duration) int { return x.r.runs.drain(timeout) }

// Close closes the clusters' connections the Stacks' runs kept.
func (x *Reconciler) Close() { x.r.conns.Close() }

// awaited is the digest pushed to the Stack's tag that it has not seen
// yet ("": none, or no push receiver).
func (r *reconciler) awaited(st *v1alpha1.Stack) string {
	if r.pushes == nil {
		return ""
	}
	return r.pushes.Awaited(st)
}
