package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ClusterOptions choose the default cluster (for releases without a
// cluster block) and tune every client.
type ClusterOptions struct {
	// Kubeconfig and Context are the default cluster's; "" means
	// $KUBECONFIG (or ~/.kube/config) and its current context.
	Kubeconfig string
	Context    string
	// Kubeconfigs replace the kubeconfig of cluster blocks, by block
	// name, with the file's current context (the controller's kubeconfig
	// Secrets).
	Kubeconfigs map[string]string
	// Confined refuses cluster blocks that name a kubeconfig or context
	// of their own without a Kubeconfigs entry: the files and contexts
	// of the process (the controller's) are not the stack's.
	Confined bool
	QPS      float32
	Burst    int
	// StorageDriver is where release records live: secret, configmap or
	// sql, unless the stack's storage block says (forStack).
	StorageDriver string
	// SQLConnection is the sql driver's connection string when the
	// stack's storage block gives none: $HELM_DRIVER_SQL_CONNECTION_STRING
	// (the CLI), a Secret's (the controller's Stack spec.storage). Never
	// shown: errors name the host only.
	SQLConnection string
	// Observer receives the release engines' steps (nil: none).
	Observer func(release.Event)
	// Warnings receives the API servers' warnings (deprecated fields and
	// versions), each once, as kubectl prints them: "Warning: ...". Nil
	// leaves them to client-go, which logs them through klog.
	Warnings io.Writer
	// Traffic, when not nil, counts every request to every cluster, and
	// the time requests wait on the client-side rate limiters.
	Traffic *kube.Traffic
	// Timings, when not nil, sums the time releases spend in hooks and
	// record writes.
	Timings *release.Timings
	// Budget, when not nil, is a request rate per cluster shared with
	// every other run given the same Budget (the controller's Stacks).
	Budget *kube.Budget
	// Connections, when not nil, keeps connections across runs: a run
	// connects only to clusters no earlier run sharing it reached (the
	// controller's Stacks). Nil: each run connects afresh (the CLI).
	Connections *Connections
	// Unreachable is how long a cluster's API server may go without
	// answering before the run stops waiting on it and stops retrying
	// its writes (0: kube.DefaultUnreachable; --unreachable-timeout).
	// It bounds the give-up time apart from the releases' timeouts.
	Unreachable time.Duration
	// Lists says where plans take their metadata lists from: ListShared
	// serves them from Connections' shared informers (the controller,
	// except right after a Stack's apply); the default lists directly.
	Lists ListMode
	// Impersonate, when not empty, is the user every request of the run
	// to every cluster is made as (rest.Config.Impersonate): the
	// controller's Stacks' service accounts,
	// system:serviceaccount:NAMESPACE:NAME. The connection's credentials
	// must be allowed to impersonate it on each cluster. The stack lock
	// alone is taken with the credentials themselves
	// (release.EngineOptions.Lock).
	Impersonate string
	// Namespaces are where release records are listed when the
	// credentials (as impersonated) may not list them across all
	// namespaces (release.EngineOptions.Namespaces).
	Namespaces []string
	// grace is Options.Grace, for the engines' final writes.
	grace time.Duration
	// apis is the API map the engines read stored revisions with
	// (Options.forStack; nil: convoy's table).
	apis *apimap.Map
	// storage is the stack's storage block (Options.forStack; nil:
	// StorageDriver).
	storage *config.Storage
}

// driver is where the run's records live, and the sql driver's
// connection string.
func (o ClusterOptions) driver() (release.StorageDriver, string, error) {
	if o.storage != nil {
		d, err := release.ParseStorageDriver(o.storage.Driver)
		return d, cmp.Or(string(o.storage.Connection), o.SQLConnection), err
	}
	d, err := release.ParseStorageDriver(o.StorageDriver)
	return d, o.SQLConnection, err
}

// Clusters connects to the clusters of a run: each cluster block (and the
// default cluster) is resolved once to what it connects to, and blocks that
// reach the same API server share one engine, one set of records and one
// lock. Connection failures are remembered, so a broken cluster is reported
// once. Safe for concurrent use.
type Clusters struct {
	opts     ClusterOptions
	warnings rest.WarningHandler // nil: client-go's default

	mu     sync.Mutex
	byName map[string]*clusterEntry // block name; "" is the default cluster
	byID   map[kube.ClusterID]*clusterEntry
	// sql is the records' database when the driver is sql: opened with
	// the first engine, closed by Close.
	sql    *release.SQLRecords
	sqlErr error
}

// Close closes the records' database, if the run opened one: every
// connection of its pool. The engines must not be used after.
func (c *Clusters) Close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sql != nil {
		c.sql.Close()
		c.sql = nil
		c.sqlErr = errors.New("sql storage: the run's connections are closed")
	}
}

// records is the records' database, if the run opened one.
func (c *Clusters) records() *release.SQLRecords {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sql
}

// database is the records' database of conn, opened once for the run
// (whatever driver its engines use: a move between drivers reads and
// writes it too).
func (c *Clusters) database(ctx context.Context, conn string) (*release.SQLRecords, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.openSQL(ctx, conn)
}

// openSQL opens the records' database once. Called with c.mu held.
func (c *Clusters) openSQL(ctx context.Context, conn string) (*release.SQLRecords, error) {
	if c.sql == nil && c.sqlErr == nil {
		if conn == "" {
			c.sqlErr = errors.New(`sql storage: no connection string: give the storage block a connection (from a sensitive variable), or set HELM_DRIVER_SQL_CONNECTION_STRING`)
		} else {
			c.sql, c.sqlErr = release.OpenSQL(ctx, conn)
		}
	}
	return c.sql, c.sqlErr
}

type clusterEntry struct {
	id  kube.ClusterID
	eng *release.Engine
	err error
}

// resettle settles again, on each connected cluster, the releases the
// run deployed before it wrote CRDs (release.Engine.Resettle).
func (c *Clusters) resettle(ctx context.Context) {
	c.mu.Lock()
	var engines []*release.Engine
	for _, e := range c.byID {
		if e.eng != nil {
			engines = append(engines, e.eng)
		}
	}
	c.mu.Unlock()
	for _, eng := range engines {
		eng.Resettle(ctx)
	}
}

// connectClusters returns the connections of one run.
func connectClusters(opts ClusterOptions) *Clusters {
	c := &Clusters{opts: opts, byName: map[string]*clusterEntry{}, byID: map[kube.ClusterID]*clusterEntry{}}
	if opts.Warnings != nil {
		c.warnings = rest.NewWarningWriter(opts.Warnings, rest.WarningWriterOptions{Deduplicate: true})
	}
	return c
}

// Engine returns the release engine of a cluster block (nil: the default
// cluster).
func (c *Clusters) Engine(ctx context.Context, spec *config.ClusterSpec) (*release.Engine, error) {
	name := ""
	if spec != nil {
		name = spec.Name
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byName[name]; ok {
		return e.eng, e.err
	}
	e := c.connect(ctx, spec)
	c.byName[name] = e
	return e.eng, e.err
}

// connect resolves spec to its cluster and connects, unless a block
// resolved earlier reaches the same cluster. Called with c.mu held.
func (c *Clusters) connect(ctx context.Context, spec *config.ClusterSpec) *clusterEntry {
	cfg, err := c.restConfig(spec)
	if err != nil {
		return &clusterEntry{err: &connectError{err: err}}
	}
	id := kube.ClusterIDOf(cfg)
	if e, ok := c.byID[id]; ok {
		return e
	}
	e := &clusterEntry{id: id}
	c.byID[id] = e
	driver, conn, err := c.opts.driver()
	if err != nil {
		e.err = err
		return e
	}
	var records *release.SQLRecords
	if driver == release.DriverSQL {
		if records, err = c.openSQL(ctx, conn); err != nil {
			e.err = &connectError{err: err}
			return e
		}
	}
	opts := release.EngineOptions{
		Kube:       kube.Options{QPS: cfg.QPS, Burst: cfg.Burst, RateLimits: c.rateLimits(), Reach: kube.NewReach(cfg, c.opts.Unreachable)},
		Driver:     driver,
		SQL:        records,
		Observer:   c.opts.Observer,
		Grace:      c.opts.grace,
		Timings:    c.opts.Timings,
		Namespaces: c.opts.Namespaces,
		APIs:       c.opts.apis,
	}
	if c.opts.Impersonate != "" {
		if opts.Lock, err = lockClient(cfg, opts.Kube); err != nil {
			e.err = &connectError{err: fmt.Errorf("%s: %w", clusterDescription(spec), err)}
			return e
		}
	}
	var eng *release.Engine
	if c.opts.Connections == nil {
		eng, err = release.NewEngine(ctx, cfg, opts)
	} else {
		key := connectionKey(cfg, driver)
		eng, err = c.opts.Connections.engine(key, func() (*release.Engine, error) {
			return release.NewEngine(ctx, cfg, opts)
		})
		if err == nil {
			if c.opts.Lists == ListShared {
				opts.Metadata = c.opts.Connections.sharedInformers(key, eng)
			}
			eng = eng.Rebind(opts)
		}
	}
	if err != nil {
		e.err = &connectError{err: fmt.Errorf("%s: %w", clusterDescription(spec), err)}
		return e
	}
	e.eng = eng
	return e
}

// connectError is a connection error shared by every release of that
// cluster.
type connectError struct{ err error }

func (e *connectError) Error() string { return e.err.Error() }
func (e *connectError) Unwrap() error { return e.err }

// restConfig builds the client configuration of a cluster block (nil: the
// default cluster from the options and environment).
func (c *Clusters) restConfig(spec *config.ClusterSpec) (*rest.Config, error) {
	path, ctxName := c.opts.Kubeconfig, c.opts.Context
	if spec != nil {
		path = cmp.Or(spec.Kubeconfig, path)
		ctxName = cmp.Or(spec.Context, ctxName)
		p, given := c.opts.Kubeconfigs[spec.Name]
		switch {
		case given:
			path, ctxName = p, ""
		case c.opts.Confined && (spec.Kubeconfig != "" || spec.Context != ""):
			return nil, fmt.Errorf("%s: its kubeconfig and context are the controller's own, which a stack may not use: give the cluster's kubeconfig in spec.clusters (a Secret of the Stack's namespace)", clusterDescription(spec))
		}
	}
	cfg, err := LoadKubeconfig(path, ctxName)
	if errors.Is(err, errNoKubeconfig) {
		err = fmt.Errorf("%w, or give the release a cluster block", err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", clusterDescription(spec), err)
	}
	cfg.QPS, cfg.Burst = c.opts.QPS, c.opts.Burst
	if spec != nil && spec.QPS > 0 {
		cfg.QPS = float32(spec.QPS)
	}
	if spec != nil && spec.Burst > 0 {
		cfg.Burst = spec.Burst
	}
	if c.opts.Impersonate != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: c.opts.Impersonate}
	}
	if c.warnings != nil {
		cfg.WarningHandler = c.warnings
	}
	if c.opts.Traffic != nil {
		c.opts.Traffic.Wrap(cfg)
	}
	c.opts.Budget.Wrap(cfg)
	return cfg, nil
}

// lockClient is a client of cfg's cluster with cfg's own credentials, not
// the user they impersonate: the stack lock's.
func lockClient(cfg *rest.Config, o kube.Options) (kubernetes.Interface, error) {
	own := rest.CopyConfig(cfg)
	own.Impersonate = rest.ImpersonationConfig{}
	return kubernetes.NewForConfig(o.Limited(o.Config(own)))
}

func clusterDescription(spec *config.ClusterSpec) string {
	if spec == nil {
		return "the default cluster"
	}
	return fmt.Sprintf("cluster %q (%s)", spec.Name, spec.DeclRange)
}

// Connected is one distinct cluster of a stack.
type Connected struct {
	ID     kube.ClusterID
	Engine *release.Engine
	// Names are the cluster blocks that reach it ("" is the default
	// cluster), sorted.
	Names []string
}

// Describe names the cluster for people: "the default cluster" or
// `cluster "eu"`, with every block that reaches it.
func (c Connected) Describe() string {
	var parts []string
	for _, n := range c.Names {
		if n == "" {
			parts = append(parts, "the default cluster")
		} else {
			parts = append(parts, fmt.Sprintf("cluster %q", n))
		}
	}
	return joinAnd(parts)
}

// Stack connects to every cluster the stack uses, so that an unreachable
// one is reported once, before any per-release work. The result has one
// entry per distinct cluster, in a stable order.
func (c *Clusters) Stack(ctx context.Context, st *config.Stack) ([]Connected, error) {
	specs := st.UsedClusters()
	byID := map[kube.ClusterID]*Connected{}
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		eng, err := c.Engine(ctx, specs[name])
		if err != nil {
			return nil, err
		}
		id := eng.Kube().ClusterID()
		if byID[id] == nil {
			byID[id] = &Connected{ID: id, Engine: eng}
		}
		byID[id].Names = append(byID[id].Names, name)
	}
	out := make([]Connected, 0, len(byID))
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		out = append(out, *byID[id])
	}
	return out, nil
}

// ByName returns the engine of a cluster block named in a saved plan
// ("" is the default cluster).
func (c *Clusters) ByName(ctx context.Context, st *config.Stack) func(string) (*release.Engine, error) {
	return func(name string) (*release.Engine, error) {
		if name == "" {
			return c.Engine(ctx, nil)
		}
		spec := st.Clusters[name]
		if spec == nil {
			return nil, fmt.Errorf("the plan names cluster %q, which the stack does not define", name)
		}
		return c.Engine(ctx, spec)
	}
}

func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

var errNoKubeconfig = errors.New("no kubeconfig found: set $KUBECONFIG, pass --kubeconfig")

// LoadKubeconfig is the client configuration of a kubeconfig file ("":
// $KUBECONFIG, else ~/.kube/config; a leading ~/ is the home directory)
// and context ("": its current context), as kubectl and helm read it.
func LoadKubeconfig(path, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		p, err := config.ExpandHome(path)
		if err != nil {
			return nil, err
		}
		rules.ExplicitPath = p
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, errNoKubeconfig
	}
	return cfg, err
}

// KubeconfigNamespace is the namespace of the kubeconfig's context (as
// kubectl and helm default to), "default" when it names none.
func KubeconfigNamespace(path, context string) (string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		p, err := config.ExpandHome(path)
		if err != nil {
			return "", err
		}
		rules.ExplicitPath = p
	}
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).Namespace()
	if clientcmd.IsEmptyConfig(err) {
		return "", errNoKubeconfig
	}
	return ns, err
}

// rateLimits is where clients count what their rate limiters held back:
// the run's Traffic, when it counts.
func (c *Clusters) rateLimits() *kube.RateLimits {
	if c.opts.Traffic == nil {
		return nil
	}
	return &c.opts.Traffic.RateLimits
}
