package controller

import (
	"cmp"
	"io"
	"time"

	"github.com/go-logr/logr"
)

// Options configure a controller process.
type Options struct {
	// Kubeconfig and Context reach the cluster the Stacks live in, which
	// is also the stacks' default cluster ("": $KUBECONFIG, ~/.kube/config,
	// or the in-cluster config).
	Kubeconfig, Context string
	// Shard limits the controller to Stacks labelled convoy.dev/shard=Shard;
	// "" takes the Stacks without the label.
	Shard string
	// Namespace limits the controller to one namespace ("": all).
	Namespace string
	// Concurrency bounds the Stacks reconciled at once (default 4).
	Concurrency int
	// Parallelism bounds the releases one Stack plans or applies at once
	// (0: the CLI's default).
	Parallelism int
	// QPS and Burst limit the requests to each cluster a stack deploys
	// to, and those of the controller's own client (Stacks, plans,
	// events).
	QPS   float32
	Burst int
	// ClusterQPS and ClusterBurst are a request budget per cluster shared
	// by every Stack the controller reconciles (0: none).
	ClusterQPS   float32
	ClusterBurst int
	// CacheMaxSize bounds the pulled stacks and charts in CacheDir, in
	// bytes: the least recently used are removed, never one in use (0:
	// unbounded).
	CacheMaxSize int64
	// MaxPlanSize bounds a Stack's saved plan, compressed, in bytes: a
	// larger one stalls the Stack (PlanTooLarge). 0: planstore.DefaultMaxPlanSize.
	MaxPlanSize int64
	// PipelineTimeout bounds one reconcile of a Pipeline (0: 2 minutes);
	// its gates run apart.
	PipelineTimeout time.Duration
	// MetricsAddress and HealthAddress are the listen addresses of the
	// Prometheus and health endpoints ("0" disables one).
	MetricsAddress, HealthAddress string
	// LeaderElect elects one leader per shard on a Lease in
	// LeaderElectionNamespace.
	LeaderElect             bool
	LeaderElectionNamespace string
	LeaseDuration           time.Duration
	RenewDeadline           time.Duration
	RetryPeriod             time.Duration
	// CacheDir holds pulled stacks, charts and temporary plan files.
	CacheDir string
	// RegistryConfigs are credential files for registries (Helm's, then
	// Docker's).
	RegistryConfigs []string
	// Identity names this process in its leader election Lease ("": host
	// and pid).
	Identity string
	Logger   logr.Logger
	// Warnings receives the API servers' warnings (nil: discarded).
	Warnings io.Writer
	// MinInterval is the shortest interval a Stack or Pipeline is
	// reconciled at, whatever its spec (0: DefaultMinInterval).
	MinInterval time.Duration
	// DefaultServiceAccount is the service account, in each Stack's own
	// namespace, that Stacks naming none (spec.serviceAccountName) are
	// planned and applied as ("": the controller's own identity).
	DefaultServiceAccount string
	// NoCrossNamespaceRefs refuses a Stack that names an object of
	// another namespace (varsFrom, clusters, notifications' urlFrom).
	NoCrossNamespaceRefs bool
	// WebhookListen is the listen address of the push receiver
	// (POST /registry, webhook.go; "": none). WebhookTokenSecret,
	// NAMESPACE/NAME, is the Secret whose key token the notifications
	// must bear (Authorization: Bearer TOKEN); each needs the other.
	WebhookListen, WebhookTokenSecret string
	// Tenancy strict requires DefaultServiceAccount and implies
	// NoCrossNamespaceRefs (stack/tenancy.go).
	Tenancy Tenancy
}

// LeaseName is the leader election Lease of a shard.
func LeaseName(shard string) string {
	if shard == "" {
		return "convoy-controller"
	}
	return LeaseNameOf(shard)
}

// LeaseNameOf is the Lease of a named shard.
func LeaseNameOf(shard string) string { return "convoy-controller-shard-" + shard }

func (o Options) concurrency() int { return cmp.Or(o.Concurrency, 4) }

func (o Options) renewDeadline() time.Duration {
	if o.RenewDeadline > 0 {
		return o.RenewDeadline
	}
	return 10 * time.Second
}

func (o Options) leaderElectionNamespace() string {
	return cmp.Or(o.LeaderElectionNamespace, "convoy-system")
}
