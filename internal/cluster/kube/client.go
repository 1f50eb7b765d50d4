package kube

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Defaults for Options. client-go's own defaults (5 QPS, burst 10) would make
// the client, not the cluster, the bottleneck of a whole-environment apply.
const (
	DefaultQPS   float32 = 500
	DefaultBurst         = 1000
	// DefaultFieldManager is Helm 4's server-side apply field manager (its
	// binary's name). Applying as the same manager makes convoy and helm
	// one owner of a release's fields: `helm upgrade` and `helm rollback`
	// of what convoy applied (and the reverse) meet no conflicts, and a
	// field either of them stops setting is removed.
	DefaultFieldManager = "helm"
)

// DefaultPredecessors are the managers whose fields the default manager
// inherits: convoy's own manager before it applied as "helm", and Helm's
// client-side apply (Helm 3, and Helm 4 on releases recorded as
// client-side), which writes as "helm" with Update operations.
var DefaultPredecessors = []FieldOwner{
	{Manager: "convoy", Operation: metav1.ManagedFieldsOperationApply},
	{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate},
}

// Options configures a Client. Zero fields take the defaults above; they
// map to convoy's --kube-qps and --kube-burst.
type Options struct {
	QPS          float32
	Burst        int
	FieldManager string
	// Predecessors are managers whose fields on the main resource the
	// client's manager takes over as its own before it applies to an
	// object (as kubectl and helm upgrade client-side field management).
	// Nil with an empty FieldManager: DefaultPredecessors.
	Predecessors []FieldOwner
	// RateLimits, when not nil, counts the requests the client's rate
	// limiters (QPS and Burst) held back, and for how long.
	RateLimits *RateLimits
	// ListPageSize is how many objects ListApplied asks for per request
	// (0: DefaultListPageSize).
	ListPageSize int
	// Reach follows whether the API server answers, for every client
	// built with Config (transient.go retries through it); nil: New
	// makes one with DefaultUnreachable. Clients of one cluster built
	// beside a Client (the release records') share the Client's.
	Reach *Reach
}

// Limited returns cfg with a rate limiter of its QPS and burst that counts
// into o.RateLimits, for one client built from it (client-go gives each
// client a limiter of its own; this keeps that). Without o.RateLimits:
// cfg as is.
func (o Options) Limited(cfg *rest.Config) *rest.Config {
	return withCountedLimit(cfg, o.RateLimits)
}

// Config is a copy of cfg with o's rate limits: QPS and Burst from o,
// DefaultQPS and DefaultBurst where o gives none, whatever limiter cfg
// carried, and its requests followed and retried by o.Reach. New builds its clients from it; so must every client of the
// same cluster built beside a Client (the release records'), or it gets
// client-go's defaults (5 QPS, burst 10) for a cfg that gives none.
func (o Options) Config(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.RateLimiter = nil
	cfg.QPS, cfg.Burst = DefaultQPS, DefaultBurst
	if o.QPS != 0 {
		cfg.QPS = o.QPS // negative: unlimited, as in client-go
	}
	if o.Burst > 0 {
		cfg.Burst = o.Burst
	}
	if o.Reach != nil {
		o.Reach.Wrap(cfg)
	}
	return cfg
}

// Client talks to one cluster. It is safe for concurrent use.
type Client struct {
	dynamic  dynamic.Interface
	metadata metadata.Interface
	typed    kubernetes.Interface
	// discovery is the mapper's cached discovery: read once for the
	// REST mappings and for anything else that asks (Discovery).
	discovery    discovery.CachedDiscoveryInterface
	mapper       *restmapper.DeferredDiscoveryRESTMapper
	fieldManager string
	clusterID    ClusterID
	reach        *Reach
	predecessors []FieldOwner
	listPageSize int64
	// namespaces are those this client found existing (not terminating)
	// or created: EnsureNamespace and ValidateNamespace ask the API
	// server about each once.
	namespaces sync.Map // string → struct{}
	// absentNamespaces are those this client found absent and whose
	// create a dry run accepted, with when (CheckNamespace): the releases
	// of one new namespace check it once, and EnsureNamespace creates it
	// without reading it again. Trusted for Recent only.
	absentNamespaces sync.Map // string → time.Time
	// validated are the objects a dry run of this client accepted, by
	// what was sent, with when (validations.go).
	validated  sync.Map // validationKey → time.Time
	remembered atomic.Int64
	// mappings are the REST mappings found, until the mapper is reset:
	// the mapper finds one by walking every group and version, which a
	// plan of thousands of objects would do for each.
	mappings sync.Map // schema.GroupVersionKind → *meta.RESTMapping
	// lastRediscovery is when the mapper was last reset (UnixNano; 0:
	// never, or a CRD or APIService was written since): a kind discovery
	// does not list has discovery read again at most every
	// rediscoverAfter (rediscoveryDue).
	lastRediscovery atomic.Int64
	// namespaceTurns makes EnsureNamespace calls for one namespace take
	// turns (namespaceTurn).
	namespaceTurns sync.Map // string → chan struct{}
}

// New builds a Client from cfg, which it does not modify.
func New(cfg *rest.Config, opts Options) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("kube: no REST config")
	}
	if opts.Reach == nil {
		opts.Reach = NewReach(cfg, 0)
	}
	// Options decide the rate limits, not whatever the config carried.
	cfg = opts.Config(cfg)
	fieldManager, predecessors := opts.FieldManager, opts.Predecessors
	if fieldManager == "" {
		fieldManager = DefaultFieldManager
		if predecessors == nil {
			predecessors = DefaultPredecessors
		}
	}

	dyn, err := newDynamicForConfig(opts.Limited(cfg))
	if err != nil {
		return nil, fmt.Errorf("kube: dynamic client: %w", err)
	}
	md, err := NewMetadataForConfig(opts.Limited(cfg))
	if err != nil {
		return nil, fmt.Errorf("kube: metadata client: %w", err)
	}
	typed, err := kubernetes.NewForConfig(opts.Limited(cfg))
	if err != nil {
		return nil, fmt.Errorf("kube: client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(opts.Limited(cfg))
	if err != nil {
		return nil, fmt.Errorf("kube: discovery client: %w", err)
	}
	cached := memory.NewMemCacheClient(disco)
	return &Client{
		dynamic:      dyn,
		metadata:     md,
		typed:        typed,
		discovery:    cached,
		mapper:       restmapper.NewDeferredDiscoveryRESTMapper(cached),
		fieldManager: fieldManager,
		clusterID:    ClusterIDOf(cfg),
		reach:        opts.Reach,
		predecessors: slices.Clone(predecessors),
		listPageSize: int64(cmp.Or(opts.ListPageSize, DefaultListPageSize)),
	}, nil
}

// Reach follows whether the client's API server answers.
func (c *Client) Reach() *Reach { return c.reach }

// FieldManager is the server-side apply field manager of this client.
func (c *Client) FieldManager() string { return c.fieldManager }

// IsOwn reports whether o is this client's server-side apply manager on the
// main resource, or one of its predecessors.
func (c *Client) IsOwn(o FieldOwner) bool {
	if o.Subresource != "" {
		return false
	}
	if o.Manager == c.fieldManager && o.Operation == metav1.ManagedFieldsOperationApply {
		return true
	}
	return slices.Contains(c.predecessors, o)
}

// Discovery is the discovery the client's REST mapper reads, cached in
// memory until the mapper is reset: what a caller reads of it (the served
// groups and resources) the mapper then finds without asking again.
func (c *Client) Discovery() discovery.CachedDiscoveryInterface { return c.discovery }

// RESTMapper is the client's discovery-backed mapper (reset after CRDs are
// installed).
func (c *Client) RESTMapper() meta.RESTMapper { return c.mapper }

// IsNamespaced reports whether objects of gvk live in a namespace.
func (c *Client) IsNamespaced(gvk schema.GroupVersionKind) (bool, error) {
	m, err := c.mapping(gvk)
	if err != nil {
		return false, err
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// mapping resolves gvk, re-reading discovery once when the kind is unknown:
// its CRD may have been installed since the cache was filled.
func (c *Client) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if m, ok := c.mappings.Load(gvk); ok {
		return m.(*meta.RESTMapping), nil
	}
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) && c.rediscoveryDue() {
		c.resetMapper()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, err
	}
	c.mappings.Store(gvk, m)
	return m, nil
}

// resetMapper forgets what discovery said, so that the next mapping reads
// it again (a kind just installed, or gone).
func (c *Client) resetMapper() {
	c.lastRediscovery.Store(time.Now().UnixNano())
	c.mappings.Clear()
	c.mapper.Reset()
}

// rediscoverAfter bounds how often a kind discovery does not list has
// discovery read again. A chart of custom resources planned before its
// CRDs exist asks for each of its objects: kube-prometheus-stack's first
// plan read discovery 71 times (213 requests), where one read says the
// same. A CRD or APIService written by this client makes a read due at
// once (wrote); one created by someone else is seen within this bound.
const rediscoverAfter = time.Second

// rediscoveryDue says whether a kind discovery did not list may have
// discovery read again now, and if so claims it: of the callers that ask
// at once, one reads.
func (c *Client) rediscoveryDue() bool {
	last := c.lastRediscovery.Load()
	now := time.Now().UnixNano()
	return now-last >= int64(rediscoverAfter) && c.lastRediscovery.CompareAndSwap(last, now)
}

// ClusterID identifies a cluster by what a client connects to: the API
// server's URL, normalised (scheme and host lower-cased, default port and
// trailing slash dropped). Two kubeconfig contexts, or two cluster blocks,
// that reach the same API server are one cluster: the same release records,
// the same stack lock.
type ClusterID string

// ClusterIDOf returns the identity of the cluster cfg connects to.
func ClusterIDOf(cfg *rest.Config) ClusterID {
	host := cfg.Host
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return ClusterID(strings.TrimRight(cfg.Host, "/"))
	}
	u.Scheme = strings.ToLower(u.Scheme)
	h, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	u.Host = h
	if port != "" {
		u.Host = net.JoinHostPort(h, port)
	}
	u.Path = strings.TrimRight(u.Path+cfg.APIPath, "/")
	return ClusterID(u.String())
}

// ClusterID is the identity of the cluster this client talks to.
func (c *Client) ClusterID() ClusterID { return c.clusterID }
