package planner

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/memo"
	"github.com/convoy-sh/convoy/internal/stack/config"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ClusterView is what a plan reads of one cluster: its release records,
// its live objects (whole, or what convoy's field manager applied of
// them), and the server-side dry runs of what the plan would apply. The
// planner decides; the view reads, and owns how (lists or GETs, the
// controller's shared informers, what is read ahead, what is read once
// per plan), told by the plan what it will read (Reads). Rendering,
// parsing and fingerprints are the cluster's release.Renderer's: the
// planner takes the two, one handle per cluster (renderer, view).
//
// The real view (Input.View nil) reads through the cluster's
// *release.Engine, one per cluster and plan; planner/plannertest holds a
// cluster in memory for unit tests of the planner's decisions. Both read
// records through RecordReads.
//
// What a view returns is the plan's, shared by its releases: callers never
// modify it.
type ClusterView interface {
	// Records are the records of a namespace by release name, oldest
	// first, read once per plan: whole (release.Engine.Histories: the
	// newest and the newest deployed record of each whole) when the plan
	// reads them whole (Reads.WholeRecords), else partial, as their
	// metadata tells them (release.Release.Partial).
	Records(ctx context.Context, namespace string) (map[string][]*release.Release, error)
	// Whole is the whole record of a partial one (r itself when whole),
	// read once per plan.
	Whole(ctx context.Context, r *release.Release) (*release.Release, error)
	// StackRecords are the releases with a record of stack
	// (release.StackLabel) on the cluster, read once per plan.
	StackRecords(ctx context.Context, stack string) ([]release.RecordKey, error)
	// StackReleases are the records of each release with a record of
	// stack (StackRecords), oldest first, as Records reads them: the
	// newest of each says whose the release is now (release.StackLabel),
	// at which address (release.AddressLabel), in which status.
	StackReleases(ctx context.Context, stack string) (map[release.RecordKey][]*release.Release, error)
	// CopiesOf says whether the records of release to in namespace are
	// copies of every record of from (release.Storage.CopiesOf).
	CopiesOf(ctx context.Context, namespace, from, to string) (bool, error)
	// RecordsLeftBehind fails with a *release.RecordsLeftBehindError when
	// Helm's Secrets in namespace hold records of release name that the
	// stack's driver (sql, configmap) does not: called when it holds none.
	RecordsLeftBehind(ctx context.Context, namespace, name string) error

	// Live is the live object (nil: absent), read once per plan.
	Live(ctx context.Context, ref kube.Ref) (*unstructured.Unstructured, error)
	// Applied is what convoy's field manager applied of the live object
	// (nil: absent), read once per plan from its metadata.
	Applied(ctx context.Context, ref kube.Ref) (*kube.Applied, error)
	// Get reads a live object now, with a GET (nil: absent): what the
	// plan needs as it is, not as the plan's lists hold it (a
	// StorageClass, an object a chart's lookup read).
	Get(ctx context.Context, ref kube.Ref) (*unstructured.Unstructured, error)
	// Claims are the PersistentVolumeClaims of a namespace, listed each
	// time they are asked (for the StatefulSets a release resizes,
	// replaces or deletes).
	Claims(ctx context.Context, namespace string) ([]*unstructured.Unstructured, error)
	// OutputObjects reads the live objects a dependency's outputs read of
	// its deployed record rec (needs: what they read).
	OutputObjects(rec *release.Release, needs config.ResourceNeeds) func(context.Context, kube.Ref) (*unstructured.Unstructured, error)

	// DryRun applies obj server-side without persisting it, as apply
	// will: forcing the fields obj sets, leaving those ignore names to
	// others. live is the object as the plan read it (nil: absent).
	DryRun(ctx context.Context, obj, live *unstructured.Unstructured, ignore kube.IgnoreRules) (*unstructured.Unstructured, error)
	// DryRunReplace replaces a CustomResourceDefinition without
	// persisting it (kube.Client.ReplaceCRD): what crds =
	// "create_replace" would make of it.
	DryRunReplace(ctx context.Context, crd *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// DryRunCreate asks whether the API server would create obj in
	// namespace (kube.Client.DryRunCreateIn): a new object validated
	// outside a namespace that does not exist yet.
	DryRunCreate(ctx context.Context, obj *unstructured.Unstructured, namespace string) error
	// Namespace says whether namespace exists, read once per plan
	// (kube.Client.CheckNamespace: one the plan may not read is taken to
	// exist).
	Namespace(ctx context.Context, namespace string) (bool, error)
	// Admission is what the cluster's admission webhooks and policies
	// match, read once per plan; one the plan may not read matches
	// everything: whether a dry run may be skipped (dryrunskip.go).
	Admission(ctx context.Context) (AdmissionScope, error)
}

// renderer is the plan's handle on the cluster of a cluster block: the
// renderer of its release engine (Input.Engine), whose view becomes the
// plan's view of that cluster (view). The planner renders and parses
// through the one and reads the cluster through the other.
func (c *computer) renderer(ctx context.Context, cluster *config.ClusterSpec) (*release.Renderer, error) {
	eng, err := c.in.Engine(ctx, cluster)
	if err != nil {
		return nil, err
	}
	c.viewOf(eng)
	return eng.Renderer, nil
}

// viewOf is the plan's view of eng's cluster: Input.View's, or the
// engine's own, one per cluster and plan.
func (c *computer) viewOf(eng *release.Engine) ClusterView {
	id := eng.Kube().ClusterID()
	if v, ok := c.views.Load(id); ok {
		return v.(ClusterView)
	}
	reads := c.reads(eng)
	var v ClusterView
	if c.in.View != nil {
		v = c.in.View(eng, reads)
	} else {
		v = newEngineView(eng, reads, c.in.Records)
	}
	got, _ := c.views.LoadOrStore(id, v)
	return got.(ClusterView)
}

// view is the plan's view of rd's cluster, whose engine the plan has met
// (renderer).
func (c *computer) view(rd *release.Renderer) ClusterView {
	v, ok := c.views.Load(rd.ClusterID())
	if !ok {
		panic(fmt.Sprintf("planner: no view of cluster %s", rd.ClusterID()))
	}
	return v.(ClusterView)
}

// reads is what the plan tells the view of eng's cluster (Reads).
func (c *computer) reads(eng *release.Engine) Reads {
	ours := c.stackReleases()
	return Reads{
		WholeRecords: (c.in.Refresh == RefreshFull || c.in.Observe == ObserveContent) && c.in.Records == nil,
		WholeReads: func(ctx context.Context, namespace string) (int, error) {
			return c.predictWholeReads(ctx, eng.Renderer, namespace)
		},
		AppliedLists: c.in.Refresh == RefreshIncremental && c.in.Observe == ObserveMetadata && !c.in.Destroy,
		Declared:     func(namespace, name string) bool { return ours[namespace+"/"+name] },
		Namespaces: func(ctx context.Context) ([]string, error) {
			return c.readNamespaces(ctx, eng.Kube().ClusterID())
		},
		Live:  c.in.Live,
		Do:    c.do,
		Stats: c.stats,
	}
}

// engineView is the ClusterView of a real cluster, through its release
// engine, for one plan: each list and GET is made once.
type engineView struct {
	eng   *release.Engine
	reads Reads
	live  LiveReads
	stats *Stats

	records *RecordReads

	lists memo.Map[kindKey, map[string]*unstructured.Unstructured] // live objects by name
	gets  memo.Map[objectKey, *unstructured.Unstructured]          // LiveGets: live objects read
	// informed are the metadata lists the engine's cache (the
	// controller's shared informers) serves, by kind and namespace; nil
	// when it serves none (LiveGets: informedAbsent).
	informed memo.Map[kindKey, map[string]*kube.Applied]
	// applied are the metadata lists the fast path reads (Applied),
	// started early by prefetchApplied, at most cap(prefetch) at once.
	applied  memo.Map[kindKey, map[string]*kube.Applied]
	prefetch chan struct{}
	// admission is what the cluster's admission configurations match.
	admission  memo.Map[struct{}, AdmissionScope]
	namespaces memo.Map[string, bool] // exists (Namespace)
}

// EngineView is the real view of eng's cluster for reads made outside a
// plan (the run's, before it plans: the implicit moves it finds in the
// stack's records, StackReleases), that read as reads says: each list
// and GET once.
func EngineView(eng *release.Engine, reads Reads) ClusterView {
	return newEngineView(eng, reads, nil)
}

// newEngineView is the view of eng's cluster for a plan that reads as
// reads says; records, when not nil, lists the records' metadata
// (Input.Records).
func newEngineView(eng *release.Engine, reads Reads, records RecordSource) *engineView {
	v := &engineView{eng: eng, reads: reads, live: reads.Live, stats: reads.Stats, prefetch: make(chan struct{}, prefetchLists)}
	if v.stats == nil {
		v.stats = &Stats{}
	}
	v.records = NewRecordReads(engineRecords{eng, records}, reads, v.prefetchApplied)
	return v
}

func (v *engineView) Records(ctx context.Context, namespace string) (map[string][]*release.Release, error) {
	return v.records.Records(ctx, namespace)
}

func (v *engineView) Whole(ctx context.Context, r *release.Release) (*release.Release, error) {
	return v.records.Whole(ctx, r)
}

func (v *engineView) StackRecords(ctx context.Context, stack string) ([]release.RecordKey, error) {
	return v.records.Stack(ctx, stack)
}

func (v *engineView) StackReleases(ctx context.Context, stack string) (map[release.RecordKey][]*release.Release, error) {
	return v.records.StackReleases(ctx, stack)
}

func (v *engineView) CopiesOf(ctx context.Context, namespace, from, to string) (bool, error) {
	return v.eng.Storage(namespace).CopiesOf(ctx, from, to)
}

func (v *engineView) RecordsLeftBehind(ctx context.Context, namespace, name string) error {
	return v.eng.RecordsLeftBehind(ctx, namespace, name)
}

// Live reads the live object: one list per kind and namespace (or per
// cluster-scoped kind), shared by every release of the plan, instead of one
// request per object (LiveGets: a GET each, once per plan). Secrets are
// listed without Helm's release records, which would make the list as
// large as the stack's history.
func (v *engineView) Live(ctx context.Context, ref kube.Ref) (*unstructured.Unstructured, error) {
	kc := v.eng.Kube()
	if v.live == LiveGets {
		return v.gets.Get(objectKey{kc.ClusterID(), ref}, func() (*unstructured.Unstructured, error) {
			if v.informedAbsent(ctx, ref) {
				return nil, nil
			}
			return getLive(ctx, kc, ref)
		})
	}
	namespaced, err := kc.IsNamespaced(ref.GroupVersionKind())
	if err != nil || (namespaced && ref.Namespace == "") {
		return getLive(ctx, kc, ref)
	}
	return sharedList(v.stats, &v.lists, kc, ref, func(opts metav1.ListOptions) (map[string]*unstructured.Unstructured, error) {
		list, err := kc.List(ctx, ref.APIVersion(), ref.Kind, ref.Namespace, opts)
		if err != nil {
			return nil, err
		}
		objs := make(map[string]*unstructured.Unstructured, len(list))
		for _, u := range list {
			objs[u.GetName()] = u
		}
		return objs, nil
	})
}

// informedAbsent tells whether the engine's metadata cache (the
// controller's shared informers) serves ref's kind and namespace and holds
// no such object: a first install's objects are then not read one by one.
// A cache a moment behind may miss an object just created by someone
// else; the plan then shows it created, and the apply neither overwrites
// nor adopts it unchecked: its check of the plan lists what was created
// since (run.VerifyObserved), and an object created-only that exists is
// checked for its owner (kube.ApplyOptions.Create).
func (v *engineView) informedAbsent(ctx context.Context, ref kube.Ref) bool {
	l := v.eng.Metadata()
	if l == nil || ref.Namespace == "" {
		return false
	}
	kc := v.eng.Kube()
	key := kindKey{nsKey{kc.ClusterID(), ref.Namespace}, ref.APIVersion(), ref.Kind}
	objs, err := v.informed.Get(key, func() (map[string]*kube.Applied, error) {
		objs, served, err := kc.ListAppliedFrom(ctx, l, ref.APIVersion(), ref.Kind, ref.Namespace, metav1.ListOptions{})
		if !served || err != nil {
			return nil, err
		}
		return objs, nil
	})
	if err != nil || objs == nil {
		return false
	}
	_, found := objs[ref.Name]
	return !found
}

// Applied is what convoy's field manager applied of the live object
// (nil: absent), read from one list of metadata per kind and namespace
// (kube.Client.ListApplied) shared by the releases the plan proves
// unchanged: no spec, status or other managers' fields are decoded or
// kept for them. Releases planned in full read full lists (Live).
//
// An engine with a Metadata cache (the controller's shared informers)
// serves these lists without asking the API server.
func (v *engineView) Applied(ctx context.Context, ref kube.Ref) (*kube.Applied, error) {
	eng := v.eng
	kc := eng.Kube()
	namespaced, err := kc.IsNamespaced(ref.GroupVersionKind())
	if err != nil || (namespaced && ref.Namespace == "") {
		live, err := getLive(ctx, kc, ref)
		if live == nil || err != nil {
			return nil, err
		}
		return kube.AppliedOf(kc.FieldManager(), live), nil
	}
	return sharedList(v.stats, &v.applied, kc, ref, func(opts metav1.ListOptions) (map[string]*kube.Applied, error) {
		if l := eng.Metadata(); l != nil {
			objs, ok, err := kc.ListAppliedFrom(ctx, l, ref.APIVersion(), ref.Kind, ref.Namespace, opts)
			if ok || err != nil {
				return objs, err
			}
		}
		objs, err := kc.ListApplied(ctx, ref.APIVersion(), ref.Kind, ref.Namespace, opts)
		if err == nil {
			return objs, nil
		}
		// An API server that cannot serve metadata alone (an aggregated
		// one, say) still serves the objects: fall back to the full list,
		// whose error, if any, is the one to show.
		full, err := kc.List(ctx, ref.APIVersion(), ref.Kind, ref.Namespace, opts)
		if err != nil {
			return nil, err
		}
		objs = make(map[string]*kube.Applied, len(full))
		for _, u := range full {
			objs[u.GetName()] = kube.AppliedOf(kc.FieldManager(), u)
		}
		return objs, nil
	})
}

// OutputObjects reads each object from the plan's full list of its kind
// and namespace when the plan has asked for one (a release there planned
// in full) or outputLists says to, else with a GET of its own, read once
// per plan. Outputs need the whole objects of the few releases read,
// where a list would fetch and decode every object of the kind in the
// namespace: at 1,000 releases with 100 readers, 500 GETs cost the API
// server what 100 lists did and convoy a third less CPU and 50 MiB less
// memory (docs/performance.md).
func (v *engineView) OutputObjects(rec *release.Release, needs config.ResourceNeeds) func(context.Context, kube.Ref) (*unstructured.Unstructured, error) {
	kc := v.eng.Kube()
	lists := v.outputLists(kc, rec, needs)
	return func(ctx context.Context, ref kube.Ref) (*unstructured.Unstructured, error) {
		if v.live != LiveGets && ref.Namespace != "" {
			key := kindKey{nsKey{kc.ClusterID(), ref.Namespace}, ref.APIVersion(), ref.Kind}
			if lists[key] || v.lists.Has(key) {
				return v.Live(ctx, ref)
			}
		}
		return v.gets.Get(objectKey{kc.ClusterID(), ref}, func() (*unstructured.Unstructured, error) { return getLive(ctx, kc, ref) })
	}
}

// outputLists are the kinds and namespaces whose objects a dependency's
// outputs read from one full list instead of a GET each: those where the
// dependency has two objects or more and at least half of the kind's
// objects in the namespace, as the plan's list of their metadata counts
// them (a chart of many ConfigMaps in a namespace of its own, say), so the
// list carries little besides. A GET costs the API server about what
// three objects of a list do, and convoy decodes what it fetches.
// Counted from the record's objects annotation (those needs reads);
// without it, none.
func (v *engineView) outputLists(kc *kube.Client, rec *release.Release, needs config.ResourceNeeds) map[kindKey]bool {
	objs, ok := release.RecordObjectsOf(rec)
	if !ok {
		return nil
	}
	need := map[kindKey]int{}
	for _, o := range objs {
		if o.Ref.Namespace != "" && needs.Reads(config.ResourceKey(o.Ref.APIVersion(), o.Ref.Kind, o.Ref.Name)) {
			need[kindKey{nsKey{kc.ClusterID(), o.Ref.Namespace}, o.Ref.APIVersion(), o.Ref.Kind}]++
		}
	}
	var lists map[kindKey]bool
	for key, n := range need {
		if n < 2 {
			continue
		}
		all, ok := v.applied.Existing(key)
		if !ok || 2*n < len(all) {
			continue
		}
		if lists == nil {
			lists = map[kindKey]bool{}
		}
		lists[key] = true
	}
	return lists
}

// DryRun asks the API server (kube.DryRunServer), forcing the fields obj
// sets.
func (v *engineView) DryRun(ctx context.Context, obj, live *unstructured.Unstructured, ignore kube.IgnoreRules) (*unstructured.Unstructured, error) {
	res, err := v.eng.Kube().Apply(ctx, []*unstructured.Unstructured{obj}, kube.ApplyOptions{DryRun: kube.DryRunServer, Force: true, Ignore: ignore, Live: live, LiveKnown: true})
	if err != nil {
		return nil, err
	}
	return res[0].Live, nil
}

func (v *engineView) Get(ctx context.Context, ref kube.Ref) (*unstructured.Unstructured, error) {
	return getLive(ctx, v.eng.Kube(), ref)
}

func (v *engineView) Claims(ctx context.Context, namespace string) ([]*unstructured.Unstructured, error) {
	return v.eng.Kube().List(ctx, "v1", "PersistentVolumeClaim", namespace, metav1.ListOptions{})
}

func (v *engineView) DryRunReplace(ctx context.Context, crd *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return v.eng.Kube().ReplaceCRD(ctx, crd, true)
}

func (v *engineView) DryRunCreate(ctx context.Context, obj *unstructured.Unstructured, namespace string) error {
	return v.eng.Kube().DryRunCreateIn(ctx, obj, namespace)
}

func (v *engineView) Namespace(ctx context.Context, namespace string) (bool, error) {
	return v.namespaces.Get(namespace, func() (bool, error) {
		return v.eng.Kube().CheckNamespace(ctx, namespace)
	})
}

// Admission lists each kind of admission configuration
// (admissionResources, kube.Client.AdmissionGroups) once per plan.
func (v *engineView) Admission(ctx context.Context) (AdmissionScope, error) {
	return v.admission.Get(struct{}{}, func() (AdmissionScope, error) {
		scope := AdmissionScope{Groups: map[string]bool{}}
		err := v.reads.do(ctx, func() error {
			for _, gvr := range admissionResources {
				v.stats.add(&v.stats.Lists, 1)
				groups, all, err := v.eng.Kube().AdmissionGroups(ctx, gvr)
				switch {
				case err != nil && ctx.Err() != nil:
					return ctx.Err()
				case err != nil || all:
					scope.All = true // dry-run everything
					return nil
				}
				for _, g := range groups {
					scope.Groups[g] = true
				}
			}
			return nil
		})
		return scope, err
	})
}

// sharedList returns ref's object from the plan's list of its kind and
// namespace in m, listing it (with list) once per plan; release records
// are left out of Secret lists. Lists and list hits count in the stats.
func sharedList[T any](stats *Stats, m *memo.Map[kindKey, map[string]T], kc *kube.Client, ref kube.Ref, list func(metav1.ListOptions) (map[string]T, error)) (T, error) {
	key := kindKey{nsKey{kc.ClusterID(), ref.Namespace}, ref.APIVersion(), ref.Kind}
	cached := true
	objs, err := m.Get(key, func() (map[string]T, error) {
		cached = false
		var opts metav1.ListOptions
		if ref.Group == "" && ref.Kind == "Secret" {
			opts.FieldSelector = "type!=" + release.SecretType
		}
		objs, err := list(opts)
		if err != nil {
			where := "in namespace " + ref.Namespace
			if ref.Namespace == "" {
				where = "in the cluster"
			}
			return nil, fmt.Errorf("list %s %s %s: %w", ref.APIVersion(), ref.Kind, where, err)
		}
		stats.add(&stats.Lists, 1)
		return objs, nil
	})
	if err != nil {
		var zero T
		return zero, err
	}
	if cached {
		stats.add(&stats.ListHits, 1)
	}
	return objs[ref.Name], nil
}
