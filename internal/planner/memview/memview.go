// Package memview is a cluster held in memory that the planner plans
// against (planner.ClusterView: View.For a plan), so that its decisions —
// a release proven unchanged, drift, who owns a release, moved and
// removed releases, what failed revisions left, interrupted runs, which
// records it reads and how — are unit-tested under
// `go test -short`, as Helm's kubefake and storage/driver.Memory test its
// actions. The devcluster tests prove the same paths against a real API
// server.
//
// A View holds release records (release.MemoryRecords, which a plan
// reads through planner.RecordReads as it reads a real cluster's:
// View.For), live objects (in client-go's fake dynamic client, so that
// chart lookups and the reads
// the planner makes beside its view see them too) and a release engine
// over fake clients that renders and parses as the real one does, with
// the capabilities of the API resources the View serves.
//
// What it does not model, so tests that depend on it stay on the
// devcluster:
//   - Dry runs are a merge, not the API server's: DryRun returns the live
//     object with every field the applied object sets replaced by its
//     value (maps merged, lists and scalars whole). No defaulting, no
//     validation, no admission (webhooks, policies, quotas), no immutable
//     fields, no pruning of fields an earlier apply set and this one does
//     not. Fields ignore_changes lists keep their live values (what
//     kube's leave achieves by leaving them out or applying them as
//     they are).
//   - Field managers are approximated: an apply makes convoy's field
//     manager own every leaf it sets; Edit moves the leaves it changes to
//     another manager. Lists are leaves.
//   - One cluster: every cluster block plans against the same View.
//   - Namespaces: a dry run never refuses an object for its namespace
//     (the warning about a namespace nobody creates is the devcluster's
//     to test); Namespace finds those Put or applied; nothing is
//     terminating. CRDs applied by a release do not add kinds.
package memview

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/planner"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/release/releasefake"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Options describe the cluster a View holds.
type Options struct {
	// Cluster is its identity ("memory" when empty).
	Cluster kube.ClusterID
	// KubeVersion is the version it reports ("v1.36.0" when empty).
	KubeVersion string
	// Resources are the API resources it serves (DefaultResources when
	// nil).
	Resources []*metav1.APIResourceList
	// Admission are the API groups its admission webhooks match ("*":
	// every group); none by default.
	Admission []string
}

// OtherManager is the field manager Edit writes as (kubectl edit's).
const OtherManager = "kubectl-edit"

// View is a cluster held in memory. Safe for concurrent use.
type View struct {
	eng       *release.Engine
	kc        *kube.Client
	admission []string
	dynamic   dynamic.Interface
	// Records are the cluster's release records.
	Records *release.MemoryRecords

	mu sync.Mutex
	// applied is what convoy's field manager owns of each live object:
	// its leaves by path (fieldsOf).
	applied map[kube.Ref]map[string]any
	serial  int
}

// New returns an empty cluster.
func New(opts Options) (*View, error) {
	if opts.Cluster == "" {
		opts.Cluster = "memory"
	}
	if opts.KubeVersion == "" {
		opts.KubeVersion = "v1.36.0"
	}
	if opts.Resources == nil {
		opts.Resources = DefaultResources()
	}
	c, err := releasefake.New(opts.Cluster, opts.KubeVersion, opts.Resources)
	if err != nil {
		return nil, err
	}
	eng, kc, dyn := c.Engine, c.Kube, c.Dynamic
	return &View{eng: eng, kc: kc, admission: opts.Admission, dynamic: dyn, Records: release.NewMemoryRecords(), applied: map[kube.Ref]map[string]any{}}, nil
}

// DefaultResources are the API resources a View serves by default: the
// core kinds charts use most.
func DefaultResources() []*metav1.APIResourceList { return releasefake.DefaultResources() }

// Engine is the engine that renders and parses for the View.
func (v *View) Engine() *release.Engine { return v.eng }

// Engines is planner.Input.Engine: every cluster block plans against
// the View.
func (v *View) Engines(context.Context, *config.ClusterSpec) (*release.Engine, error) {
	return v.eng, nil
}

// For is the View as a plan that reads as reads says sees it
// (planner.Input.View): its records read through planner.RecordReads, as
// the real view reads them, so that the plan's record lists and reads
// (planner.Stats) are those it makes of a real cluster.
func (v *View) For(reads planner.Reads) *PlanView {
	return &PlanView{View: v, records: planner.NewRecordReads(v, reads, nil)}
}

// PlanView is a View for one plan (For).
type PlanView struct {
	*View
	records *planner.RecordReads
}

// Records implements planner.ClusterView.
func (p *PlanView) Records(ctx context.Context, namespace string) (map[string][]*release.Release, error) {
	return p.records.Records(ctx, namespace)
}

// Whole implements planner.ClusterView.
func (p *PlanView) Whole(ctx context.Context, r *release.Release) (*release.Release, error) {
	return p.records.Whole(ctx, r)
}

// StackRecords implements planner.ClusterView.
func (p *PlanView) StackRecords(ctx context.Context, stack string) ([]release.RecordKey, error) {
	return p.records.Stack(ctx, stack)
}

// Histories implements planner.RecordStore.
func (v *View) Histories(ctx context.Context, namespace string) (map[string][]*release.Release, error) {
	return v.Records.Histories(ctx, namespace)
}

// RecordMeta implements planner.RecordStore.
func (v *View) RecordMeta(_ context.Context, namespace string) ([]metav1.PartialObjectMetadata, error) {
	return v.Records.Meta(namespace), nil
}

// HistoriesOfMeta implements planner.RecordStore.
func (v *View) HistoriesOfMeta(_ context.Context, namespace string, items []metav1.PartialObjectMetadata) (map[string][]*release.Release, error) {
	return v.Records.HistoriesOfMeta(namespace, items)
}

// LoadRecord implements planner.RecordStore.
func (v *View) LoadRecord(ctx context.Context, r *release.Release) (*release.Release, error) {
	return v.Records.Load(ctx, r)
}

// DeployedRecords implements planner.RecordStore.
func (v *View) DeployedRecords(ctx context.Context, namespace string) (*release.DeployedRecords, error) {
	return v.Records.Deployed(ctx, namespace)
}

// Labelled implements planner.RecordStore.
func (v *View) Labelled(ctx context.Context, selector map[string]string, except ...string) ([]release.RecordKey, error) {
	return v.Records.Labelled(ctx, selector, except...)
}

// CopiesOf implements planner.ClusterView.
func (v *View) CopiesOf(ctx context.Context, namespace, from, to string) (bool, error) {
	return v.Records.Storage(namespace).CopiesOf(ctx, from, to)
}

// Live implements planner.ClusterView.
func (v *View) Live(ctx context.Context, ref kube.Ref) (*unstructured.Unstructured, error) {
	res, err := v.resource(ref)
	if err != nil {
		return nil, err
	}
	u, err := res.Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// Get implements planner.ClusterView.
func (v *View) Get(ctx context.Context, ref kube.Ref) (*unstructured.Unstructured, error) {
	return v.Live(ctx, ref)
}

// Claims implements planner.ClusterView.
func (v *View) Claims(ctx context.Context, namespace string) ([]*unstructured.Unstructured, error) {
	res, err := v.resource(kube.Ref{Version: "v1", Kind: "PersistentVolumeClaim", Namespace: namespace})
	if err != nil {
		return nil, err
	}
	list, err := res.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// Applied implements planner.ClusterView.
func (v *View) Applied(ctx context.Context, ref kube.Ref) (*kube.Applied, error) {
	u, err := v.Live(ctx, ref)
	if u == nil || err != nil {
		return nil, err
	}
	return kube.AppliedOf(v.kc.FieldManager(), u), nil
}

// OutputObjects implements planner.ClusterView.
func (v *View) OutputObjects(*release.Release, config.ResourceNeeds) func(context.Context, kube.Ref) (*unstructured.Unstructured, error) {
	return v.Live
}

// DryRun implements planner.ClusterView: the live object with the fields
// obj sets replaced by obj's (see the package's doc for what that leaves
// out).
func (v *View) DryRun(_ context.Context, obj, live *unstructured.Unstructured, ignore kube.IgnoreRules) (*unstructured.Unstructured, error) {
	if _, err := v.resource(kube.RefOf(obj)); err != nil {
		return nil, err
	}
	if live != nil {
		obj = ignore.Strip(obj)
	}
	return v.merged(obj, live), nil
}

// DryRunReplace implements planner.ClusterView: the CRD as given (no
// defaulting, no check of the versions its live one stores).
func (v *View) DryRunReplace(_ context.Context, crd *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if _, err := v.resource(kube.RefOf(crd)); err != nil {
		return nil, err
	}
	return crd.DeepCopy(), nil
}

// DryRunCreate implements planner.ClusterView: the fake clients' create.
func (v *View) DryRunCreate(ctx context.Context, obj *unstructured.Unstructured, namespace string) error {
	return v.kc.DryRunCreateIn(ctx, obj, namespace)
}

// Namespace implements planner.ClusterView: whether a Namespace object
// was Put or applied.
func (v *View) Namespace(ctx context.Context, namespace string) (bool, error) {
	return v.kc.CheckNamespace(ctx, namespace)
}

// Admission implements planner.ClusterView: Options.Admission.
func (v *View) Admission(context.Context) (planner.AdmissionScope, error) {
	scope := planner.AdmissionScope{All: slices.Contains(v.admission, "*"), Groups: map[string]bool{}}
	for _, g := range v.admission {
		scope.Groups[g] = true
	}
	return scope, nil
}

// merged is obj applied over live by convoy's field manager.
func (v *View) merged(obj, live *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	if live != nil {
		out = &unstructured.Unstructured{Object: mergeInto(live.DeepCopy().Object, obj.DeepCopy().Object)}
	}
	return out
}

// mergeInto sets every field of src in dst, merging maps.
func mergeInto(dst, src map[string]any) map[string]any {
	for k, sv := range src {
		sm, sIsMap := sv.(map[string]any)
		dm, dIsMap := dst[k].(map[string]any)
		if sIsMap && dIsMap {
			dst[k] = mergeInto(dm, sm)
			continue
		}
		dst[k] = sv
	}
	return dst
}

// resource is the dynamic client of ref's kind and namespace.
func (v *View) resource(ref kube.Ref) (dynamic.ResourceInterface, error) {
	m, err := v.kc.RESTMapper().RESTMapping(ref.GroupVersionKind().GroupKind(), ref.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return v.dynamic.Resource(m.Resource).Namespace(ref.Namespace), nil
	}
	return v.dynamic.Resource(m.Resource), nil
}

// write stores u as live, with a new resourceVersion (and uid when it is
// new) and managedFields: convoy's apply entry for the leaves it owns, the
// others' for the rest.
func (v *View) write(ctx context.Context, u *unstructured.Unstructured, owned, others map[string]any) (*unstructured.Unstructured, error) {
	ref := kube.RefOf(u)
	res, err := v.resource(ref)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	v.serial++
	serial := v.serial
	v.applied[ref] = owned
	v.mu.Unlock()
	u = u.DeepCopy()
	u.SetResourceVersion(strconv.Itoa(serial))
	var mf []metav1.ManagedFieldsEntry
	if len(owned) > 0 {
		mf = append(mf, managedEntry(v.kc.FieldManager(), metav1.ManagedFieldsOperationApply, u.GetAPIVersion(), owned))
	}
	if len(others) > 0 {
		mf = append(mf, managedEntry(OtherManager, metav1.ManagedFieldsOperationUpdate, u.GetAPIVersion(), others))
	}
	u.SetManagedFields(mf)
	existing, err := res.Get(ctx, u.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		u.SetUID(types.UID(fmt.Sprintf("uid-%d", serial)))
		return res.Create(ctx, u, metav1.CreateOptions{})
	case err != nil:
		return nil, err
	}
	u.SetUID(existing.GetUID())
	return res.Update(ctx, u, metav1.UpdateOptions{})
}

// managedEntry is a managedFields entry owning the leaves of fields.
func managedEntry(manager string, op metav1.ManagedFieldsOperationType, apiVersion string, fields map[string]any) metav1.ManagedFieldsEntry {
	raw, _ := json.Marshal(fields) // sorted keys: the same fields, the same bytes
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: apiVersion, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}}
}

// fieldsOf are the leaves of an object's content by path, without the
// identity and bookkeeping fields.
func fieldsOf(obj map[string]any) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, val := range m {
			path := prefix + "/" + k
			switch path {
			case "/apiVersion", "/kind", "/status", "/metadata/name", "/metadata/namespace", "/metadata/uid", "/metadata/resourceVersion",
				"/metadata/managedFields", "/metadata/creationTimestamp", "/metadata/generation":
				continue
			}
			if sub, ok := val.(map[string]any); ok && len(sub) > 0 {
				walk(path, sub)
				continue
			}
			out[path] = val
		}
	}
	walk("", obj)
	return out
}

// Apply makes obj live as convoy's apply would: merged over the live
// object, convoy's field manager owning every field obj sets.
func (v *View) Apply(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	live, err := v.Live(ctx, kube.RefOf(obj))
	if err != nil {
		return nil, err
	}
	return v.write(ctx, v.merged(obj, live), fieldsOf(obj.Object), nil)
}

// Put makes obj live as another tool made it: convoy owns none of it.
func (v *View) Put(ctx context.Context, obj *unstructured.Unstructured) error {
	_, err := v.write(ctx, obj, nil, fieldsOf(obj.Object))
	return err
}

// Edit changes a live object as `kubectl edit` would: the fields convoy
// set that edit changes move to OtherManager.
func (v *View) Edit(ctx context.Context, ref kube.Ref, edit func(*unstructured.Unstructured)) error {
	live, err := v.Live(ctx, ref)
	if err != nil {
		return err
	}
	if live == nil {
		return fmt.Errorf("%s: not found", ref)
	}
	v.mu.Lock()
	owned := maps.Clone(v.applied[ref])
	v.mu.Unlock()
	edited := live.DeepCopy()
	edit(edited)
	now := fieldsOf(edited.Object)
	others := map[string]any{}
	for path, val := range now {
		if was, ok := owned[path]; ok && jsonEqual(was, val) {
			continue
		}
		delete(owned, path)
		others[path] = val
	}
	for path := range owned {
		if _, ok := now[path]; !ok {
			delete(owned, path) // removed by the edit
		}
	}
	_, err = v.write(ctx, edited, owned, others)
	return err
}

// Delete removes a live object.
func (v *View) Delete(ctx context.Context, ref kube.Ref) error {
	res, err := v.resource(ref)
	if err != nil {
		return err
	}
	v.mu.Lock()
	delete(v.applied, ref)
	v.mu.Unlock()
	return res.Delete(ctx, ref.Name, metav1.DeleteOptions{})
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// Deploy installs or upgrades a release as a successful convoy apply
// would leave it: renders req with the engine, applies its objects
// (Apply), supersedes the deployed revision and records the new one
// deployed, with its fingerprint, applied state and objects annotation.
// Hooks are not run and nothing waits.
func (v *View) Deploy(ctx context.Context, req *release.Request) (*release.Release, error) {
	store := v.Records.Storage(req.Namespace)
	hist, err := store.History(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	prep, err := v.eng.PrepareWithHistory(ctx, req, hist)
	if err != nil {
		return nil, err
	}
	lives := make([]*unstructured.Unstructured, len(prep.Objects))
	for i, o := range prep.Objects {
		if lives[i], err = v.Apply(ctx, o); err != nil {
			return nil, err
		}
	}
	for _, r := range hist {
		if r.Info.Status != release.StatusDeployed {
			continue
		}
		r.Info.Status = release.StatusSuperseded
		if err := store.Update(ctx, r); err != nil {
			return nil, err
		}
	}
	rec := v.eng.DeployedRecordOf(prep, lives, time.Now())
	if err := store.Create(ctx, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// Prefetch is a hint that Applied will be asked of refs: the View reads
// memory, and needs none (planner.ObservedView).
func (v *View) Prefetch(context.Context, []kube.Ref) {}

var _ planner.ObservedView = (*View)(nil)
