package release

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// StorageDriver selects where release records live.
type StorageDriver int

// Storage drivers, as Helm's HELM_DRIVER.
const (
	DriverSecret StorageDriver = iota
	DriverConfigMap
	// DriverSQL keeps records in a PostgreSQL database, in helm's
	// schema (EngineOptions.SQL).
	DriverSQL
)

// ParseStorageDriver accepts Helm's names: "secret"/"secrets" (default) and
// "configmap"/"configmaps".
func ParseStorageDriver(s string) (StorageDriver, error) {
	switch strings.ToLower(s) {
	case "", "secret", "secrets":
		return DriverSecret, nil
	case "configmap", "configmaps":
		return DriverConfigMap, nil
	case "sql":
		return DriverSQL, nil
	}
	return 0, fmt.Errorf("unknown storage driver %q (want secret, configmap or sql)", s)
}

// String is the driver's name, as HELM_DRIVER spells it.
func (d StorageDriver) String() string {
	switch d {
	case DriverConfigMap:
		return "configmap"
	case DriverSQL:
		return "sql"
	}
	return "secret"
}

// Phase is the step a release operation is in, for progress reports.
type Phase string

// Phases of an operation.
const (
	PhaseRendering Phase = "rendering"
	PhaseHooks     Phase = "hooks"
	PhaseApplying  Phase = "applying"
	PhaseWaiting   Phase = "waiting"
	PhaseRestoring Phase = "restoring"
	PhaseDone      Phase = "done"
	PhaseFailed    Phase = "failed"
)

// Event is one step of a release operation.
type Event struct {
	Time      time.Time
	Namespace string
	Release   string
	Phase     Phase
	Message   string
	// Blockers are, while a wait lasts, the objects it waits for and why
	// they are not ready (nil in other events).
	Blockers []kube.ObjectStatus
	// Outage is, while a wait lasts, the API server not answering (nil
	// in other events).
	Outage *kube.Outage
}

// EngineOptions configure an Engine.
type EngineOptions struct {
	Kube   kube.Options
	Driver StorageDriver
	// SQL is the database of the records when Driver is DriverSQL; the
	// caller opened it and closes it.
	SQL *SQLRecords
	// Observer receives every step of every operation, from concurrent
	// operations concurrently. Nil: steps are written as lines to Log.
	Observer func(Event)
	// Log receives one timestamped line per step when Observer is nil;
	// nil discards.
	Log io.Writer
	// Grace bounds how long writing a release's final state may go on
	// after the operation's context ended (0: DefaultGrace).
	Grace time.Duration
	// Timings, when not nil, sums the time operations spend in hooks and
	// record writes.
	Timings *Timings
	// Metadata, when not nil, serves the lists of records' metadata and
	// of live objects' metadata that plans read (the controller's shared
	// informers); what it does not serve is listed. Nil: every list goes
	// to the API server (the CLI).
	Metadata kube.MetadataLister
	// Lock, when not nil, is the client the stack lock is taken with
	// (LockClient): the connection's credentials themselves when the
	// engine's requests impersonate a Stack's service account (the lock
	// is convoy's own coordination, not the stack's). Nil: Client.
	Lock kubernetes.Interface
	// Namespaces, when the credentials may not list release records
	// across all namespaces, are where Labelled lists them instead
	// (besides those a plan lists anyway): a Stack's own namespace.
	Namespaces []string
	// APIs is the API map stored revisions are read with: an object of
	// an API version the cluster no longer serves is read as its
	// successor (nil: apimap.Kubernetes()).
	APIs *apimap.Map
}

// Engine runs release operations against one cluster. It holds no
// per-operation state, so one Engine serves concurrent operations on
// different releases.
type Engine struct {
	// Renderer renders and parses for the engine's cluster; the engine
	// adds what reads and writes the cluster.
	*Renderer
	client  kubernetes.Interface
	meta    metadata.Interface
	sql     *SQLRecords
	notify  func(Event)
	grace   time.Duration
	timings *Timings
	// listPageSize is the page size of lists of record metadata.
	listPageSize int64
	// metadata serves plans' metadata lists (EngineOptions.Metadata).
	metadata kube.MetadataLister
	// lock and namespaces are EngineOptions.Lock and Namespaces.
	lock       kubernetes.Interface
	namespaces []string
	// fresh are the capabilities once this run wrote CRDs (Settle).
	fresh *freshCaps
}

// NewEngine connects to the cluster and reads its capabilities (version and
// served API versions) once, for rendering.
func NewEngine(ctx context.Context, cfg *rest.Config, opts EngineOptions) (*Engine, error) {
	if opts.Kube.Reach == nil {
		opts.Kube.Reach = kube.NewReach(cfg, 0)
	}
	kc, err := kube.New(cfg, opts.Kube)
	if err != nil {
		return nil, err
	}
	// The records' clients have the rate limits of kc's: their own
	// buckets of the same QPS and burst; and kc's Reach.
	cfg = opts.Kube.Config(cfg)
	client, err := kubernetes.NewForConfig(recordsConfig(opts.Kube.Limited(cfg)))
	if err != nil {
		return nil, err
	}
	meta, err := kube.NewMetadataForConfig(opts.Kube.Limited(cfg))
	if err != nil {
		return nil, err
	}
	// Through kc's cached discovery: the REST mappings the plan needs
	// next are then found without reading discovery again.
	caps, err := clusterCapabilities(kc.Discovery())
	if err != nil {
		return nil, err
	}
	return &Engine{Renderer: &Renderer{kube: kc, caps: caps, driver: opts.Driver, apis: opts.APIs}, client: client, meta: meta, sql: opts.SQL, notify: opts.notify(), grace: opts.Grace, timings: opts.Timings, listPageSize: int64(opts.Kube.ListPageSize), metadata: opts.Metadata, lock: opts.Lock, namespaces: opts.Namespaces, fresh: &freshCaps{}}, nil
}

func (opts EngineOptions) notify() func(Event) {
	if opts.Observer != nil {
		return opts.Observer
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	return func(ev Event) { WriteEvent(log, ev) }
}

// Rebind is an engine on e's connection (its clients, discovery and
// capabilities) that reports to opts' Observer or Log and uses opts'
// Grace, Timings, Metadata, Lock, Namespaces, APIs, Driver and SQL; opts'
// Kube is ignored. Runs that keep connections across operations (the
// controller's Stacks) share one connection with an engine each.
func (e *Engine) Rebind(opts EngineOptions) *Engine {
	c := *e
	c.notify, c.grace, c.timings, c.metadata = opts.notify(), opts.Grace, opts.Timings, opts.Metadata
	c.lock, c.namespaces = opts.Lock, opts.Namespaces
	// The records' database is the run's, not the connection's.
	r := *e.Renderer
	r.apis, r.driver = opts.APIs, opts.Driver
	c.Renderer, c.sql = &r, opts.SQL
	c.fresh = &freshCaps{}
	return &c
}

// LockClient is the client the stack lock is taken with
// (EngineOptions.Lock, else Client).
func (e *Engine) LockClient() kubernetes.Interface {
	if e.lock != nil {
		return e.lock
	}
	return e.client
}

// Metadata serves the metadata lists plans read from a cache kept across
// runs (nil: none, list).
func (e *Engine) Metadata() kube.MetadataLister { return e.metadata }

// Meta is the engine's metadata client.
func (e *Engine) Meta() metadata.Interface { return e.meta }

// Client is the engine's typed Kubernetes client.
func (e *Engine) Client() kubernetes.Interface { return e.client }

// Kube is the engine's cluster client.
func (e *Engine) Kube() *kube.Client { return e.kube }

// Capabilities are what templates see as .Capabilities on this cluster.
func (e *Renderer) Capabilities() *chart.Capabilities { return e.caps }

// Storage returns the release records of namespace ("" lists all).
func (e *Engine) Storage(namespace string) *Storage {
	return &Storage{Driver: e.records(namespace)}
}

// LastRevision is the newest revision of a release, whatever its status
// (0: it has none).
func (e *Engine) LastRevision(ctx context.Context, namespace, name string) (int, error) {
	h, err := e.Storage(namespace).History(ctx, name)
	if err != nil || len(h) == 0 {
		return 0, err
	}
	return h[len(h)-1].Version, nil
}

func (e *Engine) logf(namespace, release string, phase Phase, format string, args ...any) {
	e.notify(Event{Time: time.Now(), Namespace: namespace, Release: release, Phase: phase, Message: fmt.Sprintf(format, args...)})
}

// outages tells, during a wait of rel in phase, that the API server stopped
// answering (and when it will be given up on), and that it answers again.
func (e *Engine) outages(rel *Release, phase Phase) func(*kube.Outage) {
	return func(o *kube.Outage) {
		if o == nil {
			e.logf(rel.Namespace, rel.Name, phase, "API server answers again")
			return
		}
		e.notify(Event{Time: time.Now(), Namespace: rel.Namespace, Release: rel.Name, Phase: phase, Outage: o,
			Message: fmt.Sprintf("%s; giving up at %s unless it answers", o, o.Since.Add(e.kube.Reach().Bound()).Format(time.TimeOnly))})
	}
}

// WriteEvent writes an event as one timestamped line.
func WriteEvent(w io.Writer, ev Event) {
	fmt.Fprintf(w, "%s %s/%s: %s\n", ev.Time.Format(time.RFC3339), ev.Namespace, ev.Release, ev.Message)
}

// clusterCapabilities asks discovery for the server version and every
// served group/version and group/version/kind, as Helm does.
func clusterCapabilities(disco discovery.DiscoveryInterface) (*chart.Capabilities, error) {
	sv, err := disco.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("discover the cluster's version: %w", err)
	}
	kv, err := chart.ParseKubeVersion(sv.GitVersion)
	if err != nil {
		return nil, fmt.Errorf("cluster version %q: %w", sv.GitVersion, err)
	}
	_, lists, err := disco.ServerGroupsAndResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discover the cluster's APIs: %w", err)
	}
	var versions chart.VersionSet
	for _, l := range lists {
		versions = append(versions, l.GroupVersion)
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				versions = append(versions, l.GroupVersion+"/"+r.Kind)
			}
		}
	}
	slices.Sort(versions)
	versions = slices.Compact(versions)
	caps := chart.DefaultCapabilities()
	caps.KubeVersion = *kv
	caps.APIVersions = versions
	return caps, nil
}

// RecordKey names a release by its namespace and name.
type RecordKey struct{ Namespace, Name string }

// Labelled lists, across all namespaces but those in except, the releases
// with a record whose labels match selector, reading only the records'
// metadata: what a plan needs to find the releases a stack left behind,
// without fetching and decoding every record of the stack. A plan passes
// the namespaces whose records it lists anyway (except), and the API
// server leaves them out with a field selector (metadata.namespace!=…);
// from shared informers they are filtered here, so that every stack's
// list shares the one informer of the records.
func (e *Engine) Labelled(ctx context.Context, selector map[string]string, except ...string) ([]RecordKey, error) {
	if e.sql != nil {
		return e.sqlLabelled(ctx, selector, except)
	}
	gvr, records := e.recordResource()
	opts := metav1.ListOptions{LabelSelector: labels.SelectorFromSet(selector).String(), FieldSelector: records}
	var items []*metav1.PartialObjectMetadata
	ok := false
	if e.metadata != nil {
		items, ok = e.metadata.ListMetadata(ctx, gvr, "", opts)
	}
	if r, isInformers := e.metadata.(refusedClusterWide); !ok && isInformers && len(e.namespaces) > 0 && r.RefusedClusterWide(gvr, opts) {
		// Known refused across all namespaces: not asked again.
		var err error
		if items, err = e.labelledIn(ctx, gvr, opts, except); err != nil {
			return nil, err
		}
		ok = true
	}
	if !ok {
		if len(except) > 0 {
			sels := make([]fields.Selector, 0, len(except)+1)
			if records != "" {
				sel, err := fields.ParseSelector(records)
				if err != nil {
					return nil, err
				}
				sels = append(sels, sel)
			}
			for _, ns := range except {
				sels = append(sels, fields.OneTermNotEqualSelector("metadata.namespace", ns))
			}
			opts.FieldSelector = fields.AndSelectors(sels...).String()
		}
		list, err := e.meta.Resource(gvr).List(ctx, opts)
		switch {
		case apierrors.IsForbidden(err) && len(e.namespaces) > 0:
			// A namespace's service account: the records it may list.
			if items, err = e.labelledIn(ctx, gvr, opts, except); err != nil {
				return nil, err
			}
		case err != nil:
			return nil, fmt.Errorf("list release records: %w", kube.Forbidden(err))
		default:
			items = pointers(list.Items)
		}
	}
	skip := make(map[string]bool, len(except))
	for _, ns := range except {
		skip[ns] = true
	}
	seen := map[RecordKey]bool{}
	var out []RecordKey
	for _, o := range items {
		k := RecordKey{Namespace: o.Namespace, Name: o.Labels["name"]}
		if k.Name == "" || seen[k] || skip[o.Namespace] {
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	return out, nil
}

// refusedClusterWide is a MetadataLister that knows which lists across
// all namespaces the credentials are refused (kube.Informers).
type refusedClusterWide interface {
	RefusedClusterWide(gvr schema.GroupVersionResource, opts metav1.ListOptions) bool
}

// labelledIn lists the records opts selects in e.namespaces but those in
// except (Labelled, for credentials that may not list across all
// namespaces). A namespace the credentials may not list either holds no
// record they could change: it is skipped.
func (e *Engine) labelledIn(ctx context.Context, gvr schema.GroupVersionResource, opts metav1.ListOptions, except []string) ([]*metav1.PartialObjectMetadata, error) {
	var items []*metav1.PartialObjectMetadata
	opts.FieldSelector = ""
	if _, records := e.recordResource(); records != "" {
		opts.FieldSelector = records
	}
	for _, ns := range e.namespaces {
		if slices.Contains(except, ns) {
			continue
		}
		if e.metadata != nil {
			if l, ok := e.metadata.ListMetadata(ctx, gvr, ns, opts); ok {
				items = append(items, l...)
				continue
			}
		}
		list, err := e.meta.Resource(gvr).Namespace(ns).List(ctx, opts)
		if apierrors.IsForbidden(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list release records in namespace %s: %w", ns, err)
		}
		items = append(items, pointers(list.Items)...)
	}
	return items, nil
}

// Timings sum, over the operations of the engines given them, the time
// spent in hooks and in writing release records (convoy apply --stats).
// Times of concurrent operations add up: they can exceed the wall time.
// Safe for concurrent use.
type Timings struct {
	// Hooks is the time (nanoseconds) hooks took, from creating them to
	// their completion and deletion.
	Hooks atomic.Int64
	// Records is the time (nanoseconds) spent writing records: the
	// pending one before an operation touches the cluster, the final one
	// after, retries included.
	Records atomic.Int64
}

// since adds the time since start to d; nil t: nothing.
func (t *Timings) since(d func(*Timings) *atomic.Int64, start time.Time) {
	if t != nil {
		d(t).Add(int64(time.Since(start)))
	}
}

func hooksTime(t *Timings) *atomic.Int64   { return &t.Hooks }
func recordsTime(t *Timings) *atomic.Int64 { return &t.Records }

// recordsConfig is cfg for the records' typed client: Secrets and
// ConfigMaps, built-in kinds, read and written as protobuf. A record's
// payload is then its bytes on the wire, where JSON carries it in base64
// again (twice its size) and the API server and convoy encode and decode
// it as text: most of what a list of records whole costs either side.
func recordsConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return cfg
}
