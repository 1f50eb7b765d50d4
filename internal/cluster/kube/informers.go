package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// MetadataLister serves lists of objects' metadata from a cache kept
// across runs instead of asking the API server each time: the
// controller's shared informers (Informers). The CLI has none and lists.
type MetadataLister interface {
	// ListMetadata returns the metadata of the objects of resource gvr in
	// namespace ("": every namespace, or a cluster-scoped resource) that
	// opts' label and field selectors select. ok is false when the cache
	// cannot serve the list now (not permitted, its watch failed, ctx
	// ended while it filled): the caller lists directly. The items are
	// shared: read them, never modify them.
	ListMetadata(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (items []*metav1.PartialObjectMetadata, ok bool)
}

// DefaultInformerIdle is how long Informers keeps an informer nobody
// asked for: the kinds and namespaces of Stacks deleted or changed since
// stop being watched.
const DefaultInformerIdle = 15 * time.Minute

// Informers keeps shared informers of objects' metadata for one cluster
// connection (metadata client, watches), started lazily the first time a
// resource is asked for, and serves lists from them (MetadataLister). An
// informer watches a resource cluster-wide when the credentials may list
// it so, else one namespace. Only what plans read is kept: names,
// namespaces, uids, resourceVersions, labels, annotations (without
// kubectl's last-applied configuration) and the field manager's own
// managedFields entries. An informer whose watch fails is dropped, so that
// a stale cache is never served: the next list starts it afresh. Safe for
// concurrent use.
type Informers struct {
	client       metadata.Interface
	fieldManager string
	// Idle bounds how long an unused informer runs (0:
	// DefaultInformerIdle).
	Idle time.Duration
	// SyncTimeout bounds the wait for an informer's first list (0: a
	// minute); past it the caller lists directly.
	SyncTimeout time.Duration
	// Started counts the informers started (each lists once, then
	// watches).
	Started atomic.Int64
	// Keep, when set, is what an object keeps of other managers'
	// managedFields entries (release records: who wrote their payload),
	// which the informers otherwise drop.
	Keep func(*metav1.PartialObjectMetadata) []metav1.ManagedFieldsEntry

	mu     sync.Mutex
	closed bool
	byKey  map[informerKey]*metaInformer
	// narrow are the resources the credentials may not watch
	// cluster-wide: they are watched per namespace.
	narrow map[informerKey]bool
}

type informerKey struct {
	gvr           schema.GroupVersionResource
	namespace     string // "": cluster-wide
	fieldSelector string
}

func (k informerKey) String() string {
	where := "cluster-wide"
	if k.namespace != "" {
		where = "in namespace " + k.namespace
	}
	return fmt.Sprintf("%s %s (%s)", k.gvr.String(), where, k.fieldSelector)
}

type metaInformer struct {
	informer cache.SharedIndexInformer
	stop     chan struct{}
	stopOnce sync.Once
	failed   chan struct{} // closed when the watch failed
	failOnce sync.Once
	err      error // set before failed is closed
	lastUsed atomic.Int64
}

func (m *metaInformer) halt() { m.stopOnce.Do(func() { close(m.stop) }) }

// NewInformers returns the shared informers of the cluster client reaches,
// keeping fieldManager's managedFields entries.
func NewInformers(client metadata.Interface, fieldManager string) *Informers {
	return &Informers{client: client, fieldManager: fieldManager, byKey: map[informerKey]*metaInformer{}, narrow: map[informerKey]bool{}}
}

// Close stops every informer; later lists are not served.
func (in *Informers) Close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.closed = true
	for k, m := range in.byKey {
		m.halt()
		delete(in.byKey, k)
	}
}

// Running is how many informers run.
func (in *Informers) Running() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.byKey)
}

// ListMetadata implements MetadataLister.
func (in *Informers) ListMetadata(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) ([]*metav1.PartialObjectMetadata, bool) {
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, false // the direct list reports it
	}
	wide := informerKey{gvr: gvr, fieldSelector: opts.FieldSelector}
	if namespace == "" && in.isNarrow(wide) {
		return nil, false // refused cluster-wide once: not asked again
	}
	key := wide
	if namespace != "" && in.isNarrow(wide) {
		key.namespace = namespace
	}
	m, ok := in.synced(ctx, key)
	if !ok && key == wide && namespace != "" && in.isNarrow(wide) {
		key.namespace = namespace
		m, ok = in.synced(ctx, key)
	}
	if !ok {
		return nil, false
	}
	var objs []any
	if key.namespace == "" && namespace != "" {
		objs, err = m.informer.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
		if err != nil {
			return nil, false
		}
	} else {
		objs = m.informer.GetStore().List()
	}
	out := make([]*metav1.PartialObjectMetadata, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*metav1.PartialObjectMetadata); ok && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out, true
}

// RefusedClusterWide says whether the credentials were refused a
// cluster-wide watch of gvr with opts' field selector: lists across all
// namespaces would be refused too.
func (in *Informers) RefusedClusterWide(gvr schema.GroupVersionResource, opts metav1.ListOptions) bool {
	return in.isNarrow(informerKey{gvr: gvr, fieldSelector: opts.FieldSelector})
}

func (in *Informers) isNarrow(k informerKey) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.narrow[k]
}

// synced returns key's informer once it has listed, starting it if need
// be; false when it cannot serve (its list or watch failed, ctx ended, or
// the first list took longer than SyncTimeout). A cluster-wide informer
// refused for lack of permission marks its resource narrow.
func (in *Informers) synced(ctx context.Context, key informerKey) (*metaInformer, bool) {
	m := in.get(key)
	if m == nil {
		return nil, false
	}
	m.lastUsed.Store(time.Now().UnixNano())
	timeout := in.SyncTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-m.informer.HasSyncedChecker().Done():
		select {
		case <-m.failed:
			return nil, false
		case <-m.stop: // idle or closed: no longer follows the cluster
			return nil, false
		default:
			return m, true
		}
	case <-m.failed:
		if key.namespace == "" && (apierrors.IsForbidden(m.err) || apierrors.IsUnauthorized(m.err)) {
			in.mu.Lock()
			in.narrow[informerKey{gvr: key.gvr, fieldSelector: key.fieldSelector}] = true
			in.mu.Unlock()
		}
		return nil, false
	case <-ctx.Done():
		return nil, false
	case <-timer.C:
		return nil, false
	}
}

// get returns key's informer, starting it when none runs, and stops the
// informers idle for longer than Idle.
func (in *Informers) get(key informerKey) *metaInformer {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return nil
	}
	idle := in.Idle
	if idle <= 0 {
		idle = DefaultInformerIdle
	}
	now := time.Now()
	for k, m := range in.byKey {
		if now.Sub(time.Unix(0, m.lastUsed.Load())) > idle {
			m.halt()
			delete(in.byKey, k)
		}
	}
	if m, ok := in.byKey[key]; ok {
		return m
	}
	m := in.start(key)
	in.byKey[key] = m
	return m
}

// start starts key's informer. Called with in.mu held.
func (in *Informers) start(key informerKey) *metaInformer {
	fieldSelector := key.fieldSelector
	inf := metadatainformer.NewFilteredMetadataInformer(in.client, key.gvr, key.namespace, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) { o.FieldSelector = fieldSelector }).Informer()
	m := &metaInformer{informer: inf, stop: make(chan struct{}), failed: make(chan struct{})}
	m.lastUsed.Store(time.Now().UnixNano())
	_ = inf.SetTransform(in.keepWhatPlansRead)
	// Any failure of the list or the watch may leave the cache behind the
	// cluster: drop the informer (the next list starts a new one) rather
	// than serve it while client-go retries.
	_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		m.failOnce.Do(func() {
			m.err = err
			if err == nil {
				m.err = errors.New("watch failed")
			}
			close(m.failed)
		})
		m.halt()
		in.mu.Lock()
		if in.byKey[key] == m {
			delete(in.byKey, key)
		}
		in.mu.Unlock()
	})
	in.Started.Add(1)
	go inf.Run(m.stop)
	return m
}

// keepWhatPlansRead is the informers' transform: it drops what no plan
// reads of an object's metadata (other managers' managedFields entries,
// kubectl's last-applied configuration) before the object is stored.
func (in *Informers) keepWhatPlansRead(obj any) (any, error) {
	p, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	var own []metav1.ManagedFieldsEntry
	for _, mf := range p.ManagedFields {
		if mf.Manager == in.fieldManager && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "" {
			own = append(own, mf)
		}
	}
	if in.Keep != nil {
		own = append(own, in.Keep(p)...)
	}
	p.ManagedFields = own
	if _, ok := p.Annotations[lastAppliedAnnotation]; ok {
		delete(p.Annotations, lastAppliedAnnotation)
	}
	return p, nil
}

const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// ListAppliedFrom is ListApplied served by l; ok is false when l does not
// serve the list (list directly then).
func (c *Client) ListAppliedFrom(ctx context.Context, l MetadataLister, apiVersion, kind, namespace string, opts metav1.ListOptions) (map[string]*Applied, bool, error) {
	gvr, namespace, err := c.listTarget(apiVersion, kind, namespace)
	if err != nil {
		return nil, false, err
	}
	items, ok := l.ListMetadata(ctx, gvr, namespace, opts)
	if !ok {
		return nil, false, nil
	}
	out := make(map[string]*Applied, len(items))
	for _, o := range items {
		out[o.Name] = AppliedOf(c.fieldManager, o)
	}
	return out, true, nil
}
