package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/plan/planner/plannertest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Stored revisions that name an API version the cluster no longer serves
// (issue 55, item 4): records as helm-mapkubeapis users meet them.

// newPDBMem is a cluster held in memory that serves policy/v1
// PodDisruptionBudgets (not policy/v1beta1, as Kubernetes since 1.25), and
// a stack of the pdb chart as release name.
func newPDBMem(t *testing.T, name string) *mem {
	t.Helper()
	res := append(plannertest.DefaultResources(), &metav1.APIResourceList{GroupVersion: "policy/v1", APIResources: []metav1.APIResource{
		{Name: "poddisruptionbudgets", Kind: "PodDisruptionBudget", Namespaced: true, Verbs: metav1.Verbs{"get", "list", "create", "update", "patch", "delete"}},
	}})
	v, err := plannertest.New(plannertest.Options{Resources: res})
	if err != nil {
		t.Fatal(err)
	}
	m := newMem(t, pdbStack(t, name, ""))
	m.v = v
	return m
}

// pdbStack is one release of the pdb chart (a policy/v1
// PodDisruptionBudget and a ConfigMap) in namespace shop; extra is more
// HCL.
func pdbStack(t *testing.T, name, extra string) string {
	return fmt.Sprintf(`
stack "shop" {
  default_namespace = "shop"
}
release %q {
  chart = %q
}
%s`, name, chartPath(t, "testdata", "charts", "pdb"), extra)
}

// toV1beta1 names policy/v1beta1 for the PodDisruptionBudget of a stored
// revision, as a record written before Kubernetes 1.25 does.
func toV1beta1(t *testing.T) func(*release.Release) {
	return func(r *release.Release) {
		if !strings.Contains(r.Manifest, "apiVersion: policy/v1\n") {
			t.Fatalf("revision %d names no policy/v1 PodDisruptionBudget:\n%s", r.Version, r.Manifest)
		}
		r.Manifest = strings.Replace(r.Manifest, "apiVersion: policy/v1\n", "apiVersion: policy/v1beta1\n", 1)
	}
}

func hasStoredAPI(rc *plan.ReleaseChange) bool {
	for _, s := range rc.StoredAPIs {
		if s.FromAPIVersion == "policy/v1beta1" && s.Kind == "PodDisruptionBudget" && s.ToAPIVersion == "policy/v1" {
			return true
		}
	}
	return false
}

// A deployed record whose manifest another tool rewrote in place (its
// fingerprint, applied state and objects annotation kept as convoy wrote
// them) is not proven unchanged from them: the plan reads it and says that
// it names the removed API.
func TestMemRewrittenRecordNamingARemovedAPIIsFoundWhateverTheFingerprint(t *testing.T) {
	for _, o := range observes {
		t.Run(o.name, func(t *testing.T) {
			m := newPDBMem(t, "two")
			m.deploy()
			if err := m.v.Records.EditRecord("shop", "two", 1, plannertest.OtherManager, toV1beta1(t)); err != nil {
				t.Fatal(err)
			}
			var stats planner.Stats
			rc := change(t, m.mustPlan(&stats, o.observe), "release.two")
			if !hasStoredAPI(rc) {
				t.Fatalf("%s (stats %s), stored APIs %+v: the plan does not say revision 1 names policy/v1beta1", rc.Action, stats.String(), rc.StoredAPIs)
			}
			if !strings.Contains(stats.String(), "record-rewritten:1") {
				t.Errorf("stats %s: want it planned in full because its record was rewritten", stats.String())
			}
		})
	}
}

// A record convoy wrote itself naming the removed API (its objects
// annotation says so: written when the cluster served it, or an API a map
// file declares removed) is planned in full, though its fingerprint
// matches; and a record edited by convoy's own writer is trusted as
// before.
func TestMemRecordWhoseObjectsNameARemovedAPIIsPlannedInFull(t *testing.T) {
	m := newPDBMem(t, "two")
	m.deploy()
	if err := m.v.Records.EditRecord("shop", "two", 1, release.RecordFieldManager, func(r *release.Release) {
		toV1beta1(t)(r)
		r.Annotations[release.ObjectsAnnotation] = strings.Replace(r.Annotations[release.ObjectsAnnotation], `"policy/v1"`, `"policy/v1beta1"`, 1)
	}); err != nil {
		t.Fatal(err)
	}
	var stats planner.Stats
	rc := change(t, m.mustPlan(&stats, planner.ObserveMetadata), "release.two")
	if !hasStoredAPI(rc) || !strings.Contains(stats.String(), "stored-api-removed:1") {
		t.Fatalf("stats %s, stored APIs %+v: want it planned in full, naming policy/v1beta1", stats.String(), rc.StoredAPIs)
	}
}

// An unchanged record is still proven unchanged without a render.
func TestMemRecordEditedByConvoyIsStillProvenUnchanged(t *testing.T) {
	m := newPDBMem(t, "two")
	m.deploy()
	if err := m.v.Records.EditRecord("shop", "two", 1, release.RecordFieldManager, func(r *release.Release) { r.Info.Description = "relabelled" }); err != nil {
		t.Fatal(err)
	}
	var stats planner.Stats
	rc := change(t, m.mustPlan(&stats, planner.ObserveMetadata), "release.two")
	if rc.Action != plan.ActionNoOp || stats.Renders.Load() != 0 {
		t.Fatalf("%s, stats %s: want it proven unchanged", rc.Action, stats.String())
	}
}

// A moved release whose stored revision names the removed API is planned
// (its objects read as policy/v1, as an upgrade reads them), not failed.
func TestMemMovedReleaseWithARemovedStoredAPIIsPlanned(t *testing.T) {
	m := newPDBMem(t, "two")
	m.deploy()
	if err := m.v.Records.EditRecord("shop", "two", 1, plannertest.OtherManager, toV1beta1(t)); err != nil {
		t.Fatal(err)
	}
	m.rewrite(pdbStack(t, "three", `
moved {
  from = release.two
  to   = release.three
}
`))
	p, err := m.plan(nil, planner.ObserveMetadata)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	rc := change(t, p, "release.three")
	if rc.Rename == nil || rc.Action != plan.ActionUpgrade {
		t.Fatalf("%s rename %+v, want an upgrade renaming two", rc.Action, rc.Rename)
	}
	var pdb bool
	for _, o := range rc.Rename.Objects {
		pdb = pdb || (o.Ref.Kind == "PodDisruptionBudget" && o.Ref.APIVersion() == "policy/v1")
	}
	if !pdb {
		t.Errorf("renamed objects %+v: want the PodDisruptionBudget read as policy/v1", rc.Rename.Objects)
	}
	if !hasStoredAPI(rc) {
		t.Errorf("stored APIs %+v: want revision 1's policy/v1beta1 said", rc.StoredAPIs)
	}
}
