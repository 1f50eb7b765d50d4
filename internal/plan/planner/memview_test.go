package planner_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/plan/planner/plannertest"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The view the planner's unit tests plan against.
var _ planner.ClusterView = (*plannertest.PlanView)(nil)

// mem is a stack directory planned against a cluster held in memory: no
// API server, so these tests run under -short.
type mem struct {
	t      *testing.T
	dir    string
	v      *plannertest.View
	charts *resolve.Charts
	// vars are the variables' values given on the command line (--var),
	// beside the directory's auto vars files.
	vars map[string]string
	// in adjusts the planner's input before each plan.
	in func(*planner.Input)
}

func newMem(t *testing.T, hcl string) *mem {
	t.Helper()
	v, err := plannertest.New(plannertest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := &mem{t: t, dir: filepath.Join(t.TempDir(), "stack"), v: v, charts: resolve.NewCharts(t.TempDir())}
	writeStack(t, m.dir, hcl)
	return m
}

// webChart is testdata/charts/web: a ConfigMap (message), a Deployment
// (replicas) and, with extra, a second ConfigMap.
func webChart(t *testing.T) string { return chartPath(t, "testdata", "charts", "web") }

// rewrite replaces the stack's files.
func (m *mem) rewrite(hcl string) { writeStack(m.t, m.dir, hcl) }

// load evaluates the stack with its auto vars files and m.vars, as
// convoy plan does.
func (m *mem) load() *config.Stack {
	m.t.Helper()
	cfg, diags := config.LoadDir(m.dir)
	if diags.HasErrors() {
		m.t.Fatal(diags)
	}
	auto, diags := config.ReadAutoVarFiles(m.dir)
	if diags.HasErrors() {
		m.t.Fatal(diags)
	}
	opts := config.EvalOptions{Variables: auto}
	for _, name := range slices.Sorted(maps.Keys(m.vars)) {
		opts.Variables = append(opts.Variables, config.VariableValue(config.ValueFromCLIArg, "--var", name, m.vars[name]))
	}
	st, diags := config.Evaluate(context.Background(), cfg, opts)
	if diags.HasErrors() {
		m.t.Fatal(diags)
	}
	return st
}

// request is the release request of the instance at addr, as the run
// makes it when it deploys it: values known only after apply evaluated
// with what its dependencies' newest records say.
func (m *mem) request(st *config.Stack, addr string) *release.Request {
	m.t.Helper()
	a, diags := st.ResolveTargets([]string{addr})
	if diags.HasErrors() || len(a) != 1 {
		m.t.Fatalf("%s: %v", addr, diags)
	}
	inst := st.Release(a[0])
	if !inst.Known {
		applied := map[config.ReleaseInstanceAddr]config.AppliedRelease{}
		for _, d := range inst.DependsOn {
			dep := st.Release(d.Addr)
			hist, err := m.v.Records.Storage(dep.Namespace).History(context.Background(), dep.Name)
			if err != nil || len(hist) == 0 {
				m.t.Fatalf("history of %s: %v", d.Addr, err)
			}
			newest := hist[len(hist)-1]
			applied[d.Addr] = config.AppliedRelease{Revision: newest.Version, Status: string(newest.Info.Status)}
		}
		if inst, diags = st.EvaluateRelease(inst.Addr, applied); diags.HasErrors() {
			m.t.Fatal(diags)
		}
	}
	r, err := resolve.Resolve(m.charts, st.Dir, inst)
	if err != nil {
		m.t.Fatal(err)
	}
	return run.ReleaseRequest(st.ID(), r)
}

// deploy installs or upgrades every release of the stack as a successful
// apply would leave it (plannertest.View.Deploy), in dependency order.
func (m *mem) deploy() {
	m.t.Helper()
	st := m.load()
	g, _ := st.Graph()
	order, _ := g.TopologicalOrder()
	var addrs []string
	for _, addr := range order {
		addrs = append(addrs, addr.String())
	}
	m.deployOnly(addrs...)
}

// deployOnly installs or upgrades the releases at addrs, in order.
func (m *mem) deployOnly(addrs ...string) {
	m.t.Helper()
	st := m.load()
	for _, addr := range addrs {
		if _, err := m.v.Deploy(context.Background(), m.request(st, addr)); err != nil {
			m.t.Fatalf("deploy %s: %v", addr, err)
		}
	}
}

// plan plans the stack; stats, when not nil, counts its work.
func (m *mem) plan(stats *planner.Stats, observe planner.Observe) (*plan.Plan, error) {
	m.t.Helper()
	st := m.load()
	in := planner.Input{
		Stack:   st,
		Engine:  m.v.Engines,
		View:    func(_ *release.Engine, r planner.Reads) planner.ClusterView { return m.v.For(r) },
		Charts:  m.charts,
		Stats:   stats,
		Observe: observe,
		Request: func(r *resolve.Release) *release.Request { return run.ReleaseRequest(st.ID(), r) },
		Outputs: run.OutputsFrom,
	}
	if m.in != nil {
		m.in(&in)
	}
	return planner.Compute(context.Background(), in)
}

func (m *mem) mustPlan(stats *planner.Stats, observe planner.Observe) *plan.Plan {
	m.t.Helper()
	p, err := m.plan(stats, observe)
	if err != nil {
		m.t.Fatal(err)
	}
	return p
}

// change is the plan's change of the release at addr.
func change(t *testing.T, p *plan.Plan, addr string) *plan.ReleaseChange {
	t.Helper()
	for _, rc := range p.Releases {
		if rc.Addr.String() == addr {
			return rc
		}
	}
	t.Fatalf("no change of %s in the plan (%s)", addr, actions(p))
	return nil
}

// objectActions are a release change's objects as "Kind/name:action".
func objectActions(rc *plan.ReleaseChange) string {
	var s []string
	for _, o := range rc.Objects {
		s = append(s, fmt.Sprintf("%s/%s:%s", o.Ref.Kind, o.Ref.Name, o.Action))
	}
	return strings.Join(s, " ")
}

func reasonKinds(rc *plan.ReleaseChange) string {
	var s []string
	for _, r := range rc.Reasons {
		s = append(s, string(r.Kind))
	}
	return strings.Join(s, " ")
}

// webStack is one release "web" of the web chart in namespace shop.
func webStack(t *testing.T, values string) string {
	return fmt.Sprintf(`
stack "shop" {
  default_namespace = "shop"
}
release "web" {
  chart  = %q
  values = [%s]
}
`, webChart(t), values)
}

func ref(group, version, kind, namespace, name string) kube.Ref {
	return kube.Ref{Group: group, Version: version, Kind: kind, Namespace: namespace, Name: name}
}

func setReplicas(n int64) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, n, "spec", "replicas") }
}

func TestMemFirstPlanInstalls(t *testing.T) {
	m := newMem(t, webStack(t, `{ message = "a" }`))
	p := m.mustPlan(nil, planner.ObserveMetadata)
	rc := change(t, p, "release.web")
	if rc.Action != plan.ActionInstall {
		t.Fatalf("action %s, want install", rc.Action)
	}
	if got, want := objectActions(rc), "ConfigMap/web-config:create Deployment/web:create"; got != want {
		t.Errorf("objects %s, want %s", got, want)
	}
}

func TestMemUnchangedReleaseIsNotRendered(t *testing.T) {
	m := newMem(t, webStack(t, `{ message = "a" }`))
	m.deploy()
	var stats planner.Stats
	p := m.mustPlan(&stats, planner.ObserveMetadata)
	rc := change(t, p, "release.web")
	if rc.Action != plan.ActionNoOp {
		t.Fatalf("action %s (reasons %s), want no-op", rc.Action, reasonKinds(rc))
	}
	if stats.Renders.Load() != 0 || stats.Unchanged.Load() != 1 {
		t.Errorf("stats %s: want the release proven unchanged from its fingerprint, not rendered", stats.String())
	}
}
