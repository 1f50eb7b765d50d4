package planner_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fullPlan is a --refresh=full plan of the stack, with its stats.
func (e *env) fullPlan(vars map[string]string) (*plan.Plan, *planner.Stats) {
	e.t.Helper()
	st := e.load(vars)
	stats := &planner.Stats{}
	p, err := planner.Compute(context.Background(), planner.Input{
		Stack: st, Engine: e.engine, Charts: resolve.NewCharts(e.t.TempDir()),
		Refresh: planner.RefreshFull, Stats: stats,
		Request: func(r *resolve.Release) *release.Request { return run.ReleaseRequest(st.Name, r) },
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return p, stats
}

func objectCount(p *plan.Plan, addr string) int64 { return int64(len(p.Release(addr).Objects)) }

// TestFullRefreshSkipsProvenNoOpDryRuns: a full refresh of releases nobody
// touched since convoy applied them makes no dry run, and plans them as
// the dry runs would; an object another manager changed, a release whose
// inputs changed, and any release on a cluster with admission webhooks or
// policies are dry-run, and the plan shows what they find. On the
// devcluster, for its admission: a ValidatingWebhookConfiguration the
// plan finds (TestMemFullRefreshSkipsProvenNoOpDryRuns plans the same
// against plannertest).
func TestFullRefreshSkipsProvenNoOpDryRuns(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, twoReleases(appChart(t), ns, "v1"))
	e.deploy(nil)

	p, stats := e.fullPlan(nil)
	if p.HasChanges() || actions(p) != "release.db:no-op release.api:no-op" {
		t.Fatalf("unchanged: %s", actions(p))
	}
	all := objectCount(p, "release.db") + objectCount(p, "release.api")
	if all == 0 || stats.DryRuns.Load() != 0 || stats.DryRunsSkipped.Load() != all {
		t.Fatalf("unchanged: %d objects, stats %s", all, stats)
	}

	// A field convoy set, changed by another manager: api is dry-run and
	// shows the drift; db is still proven unchanged.
	ctx := context.Background()
	deps := cluster.Client().AppsV1().Deployments(ns)
	d, err := deps.Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	three := int32(3)
	d.Spec.Replicas = &three
	if _, err := deps.Update(ctx, d, metav1.UpdateOptions{FieldManager: "kubectl-scale"}); err != nil {
		t.Fatal(err)
	}
	p, stats = e.fullPlan(nil)
	api := p.Release("release.api")
	if api.Action != plan.ActionUpgrade || len(api.Drift) != 1 || api.Drift[0].Diff.Changes[0].Path != "spec.replicas" || api.Drift[0].Diff.Changes[0].Manager != "kubectl-scale" {
		t.Fatalf("drift: %s, %+v", api.Action, api.Drift)
	}
	if p.Release("release.db").Action != plan.ActionNoOp {
		t.Fatalf("drift: db is %s", p.Release("release.db").Action)
	}
	if stats.DryRuns.Load() < objectCount(p, "release.api") || stats.DryRunsSkipped.Load() != objectCount(p, "release.db") {
		t.Fatalf("drift: stats %s", stats)
	}
	e.deploy(nil)

	// Changed inputs (api's values): api's objects are dry-run, the
	// Deployment that renders as before included.
	writeStack(t, e.dir, twoReleases(appChart(t), ns, "v2"))
	p, stats = e.fullPlan(nil)
	if got := actions(p); got != "release.db:no-op release.api:upgrade" {
		t.Fatalf("values: %s", got)
	}
	if stats.DryRuns.Load() < objectCount(p, "release.api") || stats.DryRunsSkipped.Load() != objectCount(p, "release.db") {
		t.Fatalf("values: stats %s", stats)
	}
	writeStack(t, e.dir, twoReleases(appChart(t), ns, "v1"))

	// An admission webhook configuration (here one without webhooks: it
	// could hold any) may mutate or refuse what applied cleanly before:
	// nothing is skipped.
	hooks := cluster.Client().AdmissionregistrationV1().ValidatingWebhookConfigurations()
	vwc := &admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "skip-test-" + ns}}
	if _, err := hooks.Create(ctx, vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hooks.Delete(context.Background(), vwc.Name, metav1.DeleteOptions{}) })
	p, stats = e.fullPlan(nil)
	if p.HasChanges() {
		t.Fatalf("webhooks: %s", actions(p))
	}
	all = objectCount(p, "release.db") + objectCount(p, "release.api")
	if stats.DryRunsSkipped.Load() != 0 || stats.DryRuns.Load() < all {
		t.Fatalf("webhooks: %d objects, stats %s", all, stats)
	}

	// The plan with every dry run made equals the one with them skipped.
	dryRun := planJSON(t, p)
	if err := hooks.Delete(ctx, vwc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p, stats = e.fullPlan(nil)
	if stats.DryRunsSkipped.Load() != all {
		t.Fatalf("webhook deleted: %d objects, stats %s", all, stats)
	}
	if skipped := planJSON(t, p); skipped != dryRun {
		t.Fatalf("the plan with dry runs skipped differs:\n%s\nwith dry runs:\n%s", skipped, dryRun)
	}
}

// TestMemFullRefreshSkipsProvenNoOpDryRuns is
// TestFullRefreshSkipsProvenNoOpDryRuns against plannertest, its admission
// set with SetAdmission.
func TestMemFullRefreshSkipsProvenNoOpDryRuns(t *testing.T) {
	m := newMem(t, twoReleases(appChart(t), "shop", "v1"))
	m.deploy()
	m.in = func(in *planner.Input) { in.Refresh = planner.RefreshFull }
	fullPlan := func() (*plan.Plan, *planner.Stats) {
		t.Helper()
		var stats planner.Stats
		return m.mustPlan(&stats, planner.ObserveContent), &stats
	}

	p, stats := fullPlan()
	if p.HasChanges() || actions(p) != "release.db:no-op release.api:no-op" {
		t.Fatalf("unchanged: %s", actions(p))
	}
	all := objectCount(p, "release.db") + objectCount(p, "release.api")
	if all == 0 || stats.DryRuns.Load() != 0 || stats.DryRunsSkipped.Load() != all {
		t.Fatalf("unchanged: %d objects, stats %s", all, stats)
	}

	// A field convoy set, changed by another manager: api is dry-run and
	// shows the drift; db is still proven unchanged.
	if err := m.v.EditAs(context.Background(), "kubectl-scale", ref("apps", "v1", "Deployment", "shop", "api"), setReplicas(3)); err != nil {
		t.Fatal(err)
	}
	p, stats = fullPlan()
	api := p.Release("release.api")
	if api.Action != plan.ActionUpgrade || len(api.Drift) != 1 || api.Drift[0].Diff.Changes[0].Path != "spec.replicas" || api.Drift[0].Diff.Changes[0].Manager != "kubectl-scale" {
		t.Fatalf("drift: %s, %+v", api.Action, api.Drift)
	}
	if p.Release("release.db").Action != plan.ActionNoOp {
		t.Fatalf("drift: db is %s", p.Release("release.db").Action)
	}
	if stats.DryRuns.Load() < objectCount(p, "release.api") || stats.DryRunsSkipped.Load() != objectCount(p, "release.db") {
		t.Fatalf("drift: stats %s", stats)
	}
	m.deploy()

	// Changed inputs (api's values): api's objects are dry-run, the
	// Deployment that renders as before included.
	m.rewrite(twoReleases(appChart(t), "shop", "v2"))
	p, stats = fullPlan()
	if got := actions(p); got != "release.db:no-op release.api:upgrade" {
		t.Fatalf("values: %s", got)
	}
	if stats.DryRuns.Load() < objectCount(p, "release.api") || stats.DryRunsSkipped.Load() != objectCount(p, "release.db") {
		t.Fatalf("values: stats %s", stats)
	}
	m.rewrite(twoReleases(appChart(t), "shop", "v1"))

	// Admission that may mutate or refuse what applied cleanly before:
	// nothing is skipped.
	m.v.SetAdmission("*")
	p, stats = fullPlan()
	if p.HasChanges() {
		t.Fatalf("webhooks: %s", actions(p))
	}
	all = objectCount(p, "release.db") + objectCount(p, "release.api")
	if stats.DryRunsSkipped.Load() != 0 || stats.DryRuns.Load() < all {
		t.Fatalf("webhooks: %d objects, stats %s", all, stats)
	}

	// The plan with every dry run made equals the one with them skipped.
	dryRun := planJSON(t, p)
	m.v.SetAdmission()
	p, stats = fullPlan()
	if stats.DryRunsSkipped.Load() != all {
		t.Fatalf("webhook deleted: %d objects, stats %s", all, stats)
	}
	if skipped := planJSON(t, p); skipped != dryRun {
		t.Fatalf("the plan with dry runs skipped differs:\n%s\nwith dry runs:\n%s", skipped, dryRun)
	}
}

// planJSON is the plan as JSON, without its creation time.
func planJSON(t *testing.T, p *plan.Plan) string {
	t.Helper()
	c := *p
	c.CreatedAt = time.Time{}
	b, err := json.MarshalIndent(&c, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sharedLive is a ClusterView whose Live hands out one object per
// identity, as the engine's view hands out the objects of its lists to
// every release of a plan; what it handed out is kept as it was then.
type sharedLive struct {
	planner.ClusterView
	mu      sync.Mutex
	objs    map[kube.Ref]*unstructured.Unstructured
	handout map[kube.Ref]*unstructured.Unstructured
}

func (v *sharedLive) Live(ctx context.Context, ref kube.Ref) (*unstructured.Unstructured, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if o, ok := v.objs[ref]; ok {
		return o, nil
	}
	o, err := v.ClusterView.Live(ctx, ref)
	if err != nil || o == nil {
		return o, err
	}
	v.objs[ref], v.handout[ref] = o, o.DeepCopy()
	return o, nil
}

// TestMemFullRefreshLeavesSharedLiveObjects: a full refresh reads the live
// objects its view shares without changing them, whether their dry runs
// are skipped, made for drift, or made for changed inputs.
func TestMemFullRefreshLeavesSharedLiveObjects(t *testing.T) {
	m := newMem(t, twoReleases(appChart(t), "shop", "v1"))
	m.deploy()
	var views []*sharedLive
	m.in = func(in *planner.Input) {
		in.Refresh = planner.RefreshFull
		in.View = func(_ *release.Engine, r planner.Reads) planner.ClusterView {
			v := &sharedLive{ClusterView: m.v.For(r), objs: map[kube.Ref]*unstructured.Unstructured{}, handout: map[kube.Ref]*unstructured.Unstructured{}}
			views = append(views, v)
			return v
		}
	}
	check := func(what string, want string) {
		t.Helper()
		views = nil
		p := m.mustPlan(&planner.Stats{}, planner.ObserveContent)
		if got := actions(p); got != want {
			t.Fatalf("%s: %s, want %s", what, got, want)
		}
		n := 0
		for _, v := range views {
			for ref, o := range v.objs {
				n++
				if !reflect.DeepEqual(o.Object, v.handout[ref].Object) {
					t.Errorf("%s: the plan changed the shared live %s:\n%v\nwas\n%v", what, ref, o.Object, v.handout[ref].Object)
				}
			}
		}
		if n == 0 {
			t.Fatalf("%s: no live object was read through the view", what)
		}
	}
	check("unchanged", "release.db:no-op release.api:no-op")
	if err := m.v.EditAs(context.Background(), "kubectl-scale", ref("apps", "v1", "Deployment", "shop", "api"), setReplicas(3)); err != nil {
		t.Fatal(err)
	}
	check("drift", "release.db:no-op release.api:upgrade")
	m.rewrite(twoReleases(appChart(t), "shop", "v2"))
	check("values", "release.db:no-op release.api:upgrade")
}
