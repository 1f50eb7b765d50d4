// Package plannertest is a cluster held in memory that the planner plans
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
// What it models as the API server does (fields.go, dryrun.go):
//   - managedFields: each write records its field manager's fields in
//     the API server's FieldsV1 form, so that a plan names who changed a
//     field; an apply makes convoy's manager own every leaf it sets, taken
//     from the others (forced); an edit (EditAs) gives its manager the
//     leaves it changes or adds. Lists are leaves (atomic).
//   - The refusal of a change to the immutable fields of the kinds it
//     serves by default (a Deployment's, ReplicaSet's or DaemonSet's
//     selector, a Job's selector and template, a StatefulSet's spec but
//     for the fields that may change, the data of an immutable ConfigMap
//     or Secret), as the API server refuses them (kube.IsImmutable).
//   - The validation of object names (metadata.name as the API server
//     validates it for most kinds: a DNS subdomain; a DNS label for
//     Namespaces and Services).
//
// What it does not model, so tests that depend on it stay on the
// devcluster:
//   - Dry runs are a merge, not the API server's: DryRun returns the live
//     object with every field the applied object sets replaced by its
//     value (maps merged, lists and scalars whole). No defaulting, no
//     validation but of names, no admission (webhooks, policies, quotas:
//     SetAdmission only says what they match), no pruning of fields an
//     earlier apply set and this one does not. Fields ignore_changes
//     lists keep their live values (what kube's leave achieves by
//     leaving them out or applying them as they are).
//   - One cluster: every cluster block plans against the same View.
//   - Namespaces: a dry run never refuses an object for its namespace
//     (the warning about a namespace nobody creates is the devcluster's
//     to test); Namespace finds those Put or applied; nothing is
//     terminating. CRDs applied by a release do not add kinds.
//   - Controllers: nothing writes status, pods or defaults unless a test
//     does (Edit, EditAs, Put).
package plannertest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/cluster/release/releasetest"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/stack/config"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	fakedynamic "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
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

// OtherManager is the field manager Edit and Put write as (kubectl
// edit's).
const OtherManager = "kubectl-edit"

// View is a cluster held in memory. Safe for concurrent use.
type View struct {
	eng     *release.Engine
	kc      *kube.Client
	dynamic dynamic.Interface
	fake    *fakedynamic.FakeDynamicClient
	// Records are the cluster's release records.
	Records *release.MemoryRecords

	mu sync.Mutex
	// admission are the API groups admission matches (Options.Admission,
	// SetAdmission).
	admission []string
	// owners are the field managers of each live object and the leaves
	// each owns, most recent write first (managedFields' order).
	owners map[kube.Ref][]owner
	serial int
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
	c, err := releasetest.New(opts.Cluster, opts.KubeVersion, opts.Resources)
	if err != nil {
		return nil, err
	}
	eng, kc, dyn := c.Engine, c.Kube, c.Dynamic
	return &View{eng: eng, kc: kc, admission: slices.Clone(opts.Admission), dynamic: dyn, fake: dyn, Records: release.NewMemoryRecords(), owners: map[kube.Ref][]owner{}}, nil
}

// Gets counts the GETs of the object at ref made so far through the
// View's clients (a chart's lookups, the reads of the planner's engine).
func (v *View) Gets(ref kube.Ref) int {
	n := 0
	for _, a := range v.fake.Actions() {
		g, ok := a.(clienttesting.GetAction)
		if ok && a.GetVerb() == "get" && g.GetName() == ref.Name && g.GetNamespace() == ref.Namespace && a.GetResource().Group == ref.Group && a.GetResource().Version == ref.Version {
			if m, err := v.kc.RESTMapper().RESTMapping(ref.GroupVersionKind().GroupKind(), ref.Version); err == nil && m.Resource.Resource == a.GetResource().Resource {
				n++
			}
		}
	}
	return n
}

// DefaultResources are the API resources a View serves by default: the
// core kinds charts use most.
func DefaultResources() []*metav1.APIResourceList { return releasetest.DefaultResources() }

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

// StackReleases implements planner.ClusterView.
func (p *PlanView) StackReleases(ctx context.Context, stack string) (map[release.RecordKey][]*release.Release, error) {
	return p.records.StackReleases(ctx, stack)
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

// RecordsLeftBehind implements planner.ClusterView: a View's records are
// in one driver, so none is ever left behind in another.
func (v *View) RecordsLeftBehind(ctx context.Context, namespace, name string) error {
	return nil
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

// Namespace implements planner.ClusterView: whether a Namespace object
// was Put or applied.
func (v *View) Namespace(ctx context.Context, namespace string) (bool, error) {
	return v.kc.CheckNamespace(ctx, namespace)
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

// Prefetch is a hint that Applied will be asked of refs: the View reads
// memory, and needs none (planner.ObservedView).
func (v *View) Prefetch(context.Context, []kube.Ref) {}

var _ planner.ObservedView = (*View)(nil)
