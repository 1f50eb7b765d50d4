package planner_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	"k8s.io/client-go/rest"
)

// The planner's tests that need the devcluster: what only the API server
// and the tools around it show — its refusal of an immutable field, the
// requests a plan makes of it, a helm CLI's upgrade, an apply it refuses.
// The planner's decisions in each are tested against planner/plannertest
// too (plan_test.go, mem*_test.go), under -short.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// env is a stack directory planned and deployed against the devcluster.
type env struct {
	t   *testing.T
	dir string
	eng *release.Engine
}

func newEnv(t *testing.T, hcl string) *env {
	t.Helper()
	eng, err := release.NewEngine(context.Background(), cluster.RESTConfig(), release.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, dir: filepath.Join(t.TempDir(), "stack"), eng: eng}
	writeStack(t, e.dir, hcl)
	return e
}

func (e *env) load(vars map[string]string) *config.Stack {
	e.t.Helper()
	cfg, diags := config.LoadDir(e.dir)
	if diags.HasErrors() {
		e.t.Fatal(diags)
	}
	var opts config.EvalOptions
	for name, v := range vars {
		opts.Variables = append(opts.Variables, config.VariableValue(config.ValueFromCLIArg, "--var", name, v))
	}
	st, diags := config.Evaluate(context.Background(), cfg, opts)
	if diags.HasErrors() {
		e.t.Fatal(diags)
	}
	return st
}

func (e *env) engine(context.Context, *config.ClusterSpec) (*release.Engine, error) {
	return e.eng, nil
}

func (e *env) plan(vars map[string]string, targets []string, includeDeps bool) (*plan.Plan, error) {
	e.t.Helper()
	st := e.load(vars)
	addrs, diags := st.ResolveTargets(targets)
	if diags.HasErrors() {
		e.t.Fatal(diags)
	}
	return planner.Compute(context.Background(), planner.Input{
		Stack: st, Engine: e.engine, Charts: resolve.NewCharts(e.t.TempDir()), Targets: addrs, IncludeDeps: includeDeps,
		Request: func(r *resolve.Release) *release.Request { return run.ReleaseRequest(st.Name, r) },
	})
}

func (e *env) mustPlan(vars map[string]string) *plan.Plan {
	e.t.Helper()
	p, err := e.plan(vars, nil, false)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// deploy installs or upgrades every release in dependency order.
func (e *env) deploy(vars map[string]string) {
	e.t.Helper()
	st := e.load(vars)
	g, _ := st.Graph()
	order, _ := g.TopologicalOrder()
	charts := resolve.NewCharts(e.t.TempDir())
	for _, addr := range order {
		r, err := resolve.Resolve(charts, st.Dir, st.Release(addr))
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.eng.Deploy(context.Background(), run.ReleaseRequest(st.Name, r)); err != nil {
			e.t.Fatal(err)
		}
	}
}

// verify is planner.Verify of p against the cluster as it is now, read
// afresh (planner.VerifyView), as convoy apply PLANFILE verifies it.
func (e *env) verify(p *plan.Plan) []string {
	e.t.Helper()
	moved, err := planner.Verify(context.Background(), p, func(string) (planner.VerifyCluster, error) {
		return planner.VerifyCluster{View: planner.VerifyView(e.eng), Renderer: e.eng.Renderer}, nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return moved
}

// The API server refuses the change of a Deployment's selector: the plan
// replaces it (kube.IsImmutable reads the server's refusal).
func TestPlanReplaceOnImmutableFieldTheAPIServerRefuses(t *testing.T) {
	ns := cluster.Namespace(t)
	stack := func(tier string) string {
		return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "web" {
  chart  = %[1]q
  values = [{ password = "pw-123456", tier = %[3]q }]
}
`, vaultChart(t), ns, tier)
	}
	e := newEnv(t, stack(""))
	e.deploy(nil)
	writeStack(t, e.dir, stack("front"))
	p := e.mustPlan(nil)
	web := p.Release("release.web")
	var dep *plan.ObjectChange
	for _, o := range web.Objects {
		if o.Ref.Kind == "Deployment" {
			dep = o
		}
	}
	if web.Action != plan.ActionUpgrade || dep == nil || dep.Action != plan.ObjectReplace || !strings.Contains(dep.Reason, "immutable") {
		t.Fatalf("deployment: %+v", dep)
	}
	text, _, _ := render(t, p)
	if !strings.Contains(text, "-/+ apps/v1 Deployment "+ns+"/web") || !strings.Contains(text, `+ spec.selector.matchLabels.tier: "front"`) {
		t.Fatalf("text:\n%s", text)
	}
}

// TestPlanFindsRemovedReleasesWithOneClusterWideList: releases the stack
// no longer declares are uninstalled in a namespace it still declares
// (found in that namespace's records, which the plan lists anyway) and in
// one it no longer declares (found by the label's list, which leaves the
// declared namespaces out: one request of the API server). Another stack's
// release is left alone.
func TestPlanFindsRemovedReleasesWithOneClusterWideList(t *testing.T) {
	ns, far := cluster.Namespace(t), cluster.Namespace(t)
	chart := appChart(t)
	e := newEnv(t, twoReleases(chart, ns, "api")+fmt.Sprintf(`
release "far" {
  chart     = %[1]q
  namespace = %[2]q
  values    = [{ message = "far" }]
}
`, chart, far))
	e.deploy(nil)
	neighbour := newEnv(t, fmt.Sprintf(`
stack "neighbour-%[2]s" {
  default_namespace = %[2]q
}
release "nb" {
  chart  = %[1]q
  values = [{ message = "nb" }]
}
`, chart, ns))
	neighbour.deploy(nil)
	writeStack(t, e.dir, dbOnly(chart, ns))

	var mu sync.Mutex
	var lists []string
	cfg := rest.CopyConfig(cluster.RESTConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/secrets") {
				mu.Lock()
				lists = append(lists, r.URL.Query().Get("fieldSelector"))
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	})
	eng, err := release.NewEngine(context.Background(), cfg, release.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.eng = eng
	p := e.mustPlan(nil)
	removed := []string{"removed:" + ns + "/api:uninstall", "removed:" + far + "/far:uninstall"}
	slices.Sort(removed)
	if got, want := actions(p), "release.db:no-op "+strings.Join(removed, " "); got != want {
		t.Fatalf("actions: %s, want %s", got, want)
	}
	if len(lists) != 1 || lists[0] != "type=helm.sh/release.v1,metadata.namespace!="+ns {
		t.Fatalf("cluster-wide record lists: %q, want one leaving %s out", lists, ns)
	}
}

// The helm CLI's upgrade of a release the plan observed refuses the plan,
// naming the new revision and the object it changed.
func TestVerifyRefusesAfterHelmUpgrade(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, twoReleases(appChart(t), ns, "v1"))
	e.deploy(nil)
	writeStack(t, e.dir, twoReleases(appChart(t), ns, "v2"))
	p := e.mustPlan(nil)
	if moved := e.verify(p); len(moved) > 0 {
		t.Fatalf("fresh plan refused: %q", moved)
	}
	if out, err := cluster.Helm(t, "upgrade", "db", appChart(t), "-n", ns, "--set", "message=from-helm"); err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	moved := strings.Join(e.verify(p), "\n")
	if !strings.Contains(moved, "release db (namespace "+ns+") has a new revision 2 (deployed) since the plan saw revision 1 (deployed)") {
		t.Fatalf("after helm upgrade: %s", moved)
	}
	// The edit of db's ConfigMap is named too.
	if !strings.Contains(moved, "v1 ConfigMap "+ns+"/db-config was edited since the plan") {
		t.Fatalf("edited object not named: %s", moved)
	}
}

// Upgrading a release whose newest revision failed compares the values
// with the last revision that was deployed and says so, instead of
// listing every value as added.
func TestUpgradeAfterAFailedRevisionComparesValuesWithTheLastDeployed(t *testing.T) {
	ns := cluster.Namespace(t)
	stack := func(message string, invalid bool) string {
		return fmt.Sprintf("stack %q {\n  default_namespace = %q\n}\nrelease \"api\" {\n  chart  = %q\n  values = [{ message = %q, invalid = %t }]\n}\n", ns, ns, appChart(t), message, invalid)
	}
	e := newEnv(t, stack("v1", false))
	e.deploy(nil)
	writeStack(t, e.dir, stack("v2", true))
	st := e.load(nil)
	r, err := resolve.Resolve(resolve.NewCharts(t.TempDir()), st.Dir, st.Release(st.Releases[0].Addr))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.eng.Deploy(context.Background(), run.ReleaseRequest(st.Name, r)); err == nil {
		t.Fatal("the invalid Deployment was applied")
	}
	hist, err := e.eng.Storage(ns).History(context.Background(), "api")
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, h := range hist {
		states = append(states, fmt.Sprintf("%d:%s", h.Version, h.Info.Status))
	}
	writeStack(t, e.dir, stack("v3", false))
	api := e.mustPlan(nil).Release("release.api")
	if api.Action != plan.ActionUpgrade {
		t.Fatalf("action %s (history %v)", api.Action, states)
	}
	var ops []string
	for _, c := range api.Values.Changes {
		ops = append(ops, string(c.Op)+" "+c.Path)
	}
	if strings.Join(ops, ", ") != "change message" {
		t.Fatalf("values diff: %v (history %v)", ops, states)
	}
	var reasons []string
	for _, r := range api.Reasons {
		reasons = append(reasons, r.String())
	}
	if !slices.ContainsFunc(reasons, func(s string) bool { return strings.HasPrefix(s, "values: 1 value changed") }) {
		t.Fatalf("reasons: %q (history %v)", reasons, states)
	}
}

// The real view lists the stack's releases through the API server's
// label and metadata lists, as plannertest's view does from memory
// (TestMemStackReleasesListTheStacksRecords).
func TestEngineViewListsTheStacksReleases(t *testing.T) {
	ns, far := cluster.Namespace(t), cluster.Namespace(t)
	chart := appChart(t)
	e := newEnv(t, twoReleases(chart, ns, "api")+fmt.Sprintf(`
release "far" {
  chart     = %[1]q
  namespace = %[2]q
}
`, chart, far))
	e.deploy(nil)
	got, err := planner.EngineView(e.eng, planner.Reads{}).StackReleases(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	var newest []string
	for _, k := range slices.SortedFunc(maps.Keys(got), func(a, b release.RecordKey) int {
		return strings.Compare(a.Name, b.Name)
	}) {
		last := got[k][len(got[k])-1]
		newest = append(newest, fmt.Sprintf("%s/%s %d %s %s %s", k.Namespace, k.Name, last.Version, last.Info.Status, last.Labels[release.StackLabel], last.Labels[release.AddressLabel]))
	}
	want := []string{ns + "/api 1 deployed " + ns + " release.api", ns + "/db 1 deployed " + ns + " release.db", far + "/far 1 deployed " + ns + " release.far"}
	if !slices.Equal(newest, want) {
		t.Errorf("the stack's releases %q, want %q", newest, want)
	}
}
