package planner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/planner"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/resolve"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/testfiles"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

const canary = "canary-Qm7-do-not-print"

func chartPath(t *testing.T, parts ...string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func appChart(t *testing.T) string {
	return chartPath(t, "..", "release", "testdata", "charts", "app")
}

func vaultChart(t *testing.T) string { return chartPath(t, "testdata", "charts", "vault") }

func writeStack(t *testing.T, dir, hcl string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
}

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

func (e *env) load(vars map[string]string) (*config.Stack, string) {
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
	hash, err := run.ConfigHash(cfg, opts, "", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return st, hash
}

func (e *env) engine(context.Context, *config.ClusterSpec) (*release.Engine, error) {
	return e.eng, nil
}

func (e *env) plan(vars map[string]string, targets []string, includeDeps bool) (*plan.Plan, error) {
	e.t.Helper()
	st, hash := e.load(vars)
	addrs, diags := st.ResolveTargets(targets)
	if diags.HasErrors() {
		e.t.Fatal(diags)
	}
	return planner.Compute(context.Background(), planner.Input{
		Stack: st, Engine: e.engine, Charts: resolve.NewCharts(e.t.TempDir()), Targets: addrs, IncludeDeps: includeDeps, ConfigHash: hash,
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
	st, _ := e.load(vars)
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

func render(t *testing.T, p *plan.Plan) (text, js, md string) {
	t.Helper()
	var a, b, c bytes.Buffer
	if err := view.Text(&a, p); err != nil {
		t.Fatal(err)
	}
	if err := view.JSON(&b, p); err != nil {
		t.Fatal(err)
	}
	if err := view.Markdown(&c, p); err != nil {
		t.Fatal(err)
	}
	return a.String(), b.String(), c.String()
}

func twoReleases(chart, ns, apiMessage string) string {
	return dbOnly(chart, ns) + fmt.Sprintf(`release "api" {
  chart      = %[1]q
  depends_on = [release.db]
  values     = [{ message = %[2]q }]
}
`, chart, apiMessage)
}

// dbOnly is twoReleases without api.
func dbOnly(chart, ns string) string {
	return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "db" {
  chart  = %[1]q
  values = [{ message = "db" }]
}
`, chart, ns)
}

func actions(p *plan.Plan) string {
	var s []string
	for _, r := range p.Releases {
		s = append(s, r.Addr.String()+":"+string(r.Action))
	}
	return strings.Join(s, " ")
}

func TestPlanInstallNoChangesUpgrade(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, twoReleases(appChart(t), ns, "v1"))

	p := e.mustPlan(nil)
	if got := actions(p); got != "release.db:install release.api:install" {
		t.Fatalf("actions: %s", got)
	}
	if s := p.Summary().String(); s != "Plan: 2 to install, 0 to upgrade, 0 to uninstall, 0 unchanged." {
		t.Fatalf("summary: %s", s)
	}
	e.deploy(nil)

	p = e.mustPlan(nil)
	if p.HasChanges() || actions(p) != "release.db:no-op release.api:no-op" {
		text, _, _ := render(t, p)
		t.Fatalf("unchanged stack has changes: %s\n%s", actions(p), text)
	}

	writeStack(t, e.dir, twoReleases(appChart(t), ns, "v2"))
	p = e.mustPlan(nil)
	if got := actions(p); got != "release.db:no-op release.api:upgrade" {
		t.Fatalf("actions: %s", got)
	}
	api := p.Release("release.api")
	if len(api.Values.Changes) != 1 || api.Values.Changes[0].Path != "message" || api.Values.Changes[0].Before != "v1" || api.Values.Changes[0].After != "v2" {
		t.Fatalf("values diff: %+v", api.Values)
	}
	var cm *plan.ObjectChange
	for _, o := range api.Objects {
		switch {
		case o.Ref.Kind == "ConfigMap":
			cm = o
		case o.Action != plan.ObjectNoOp:
			t.Errorf("%s: %s, want no-op", o.Ref, o.Action)
		}
	}
	if cm == nil || cm.Action != plan.ObjectUpdate || cm.Template != "app/templates/configmap.yaml" {
		t.Fatalf("configmap change: %+v", cm)
	}
	// The chart prints the revision too.
	var got []string
	for _, c := range cm.Diff.Changes {
		got = append(got, fmt.Sprintf("%s: %v → %v", c.Path, c.Before, c.After))
	}
	if want := []string{"data.message: v1 → v2", "data.revision: 1 → 2"}; !slices.Equal(got, want) {
		t.Fatalf("configmap diff %q, want %q", got, want)
	}
	text, _, _ := render(t, p)
	if !strings.Contains(text, `~ data.message: "v1" → "v2"`) || !strings.Contains(text, "Plan: 0 to install, 1 to upgrade, 0 to uninstall, 1 unchanged.") {
		t.Fatalf("text:\n%s", text)
	}
}

func TestPlanReportsDrift(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, twoReleases(appChart(t), ns, "v1"))
	e.deploy(nil)

	// kubectl scale: another field manager updates the replicas.
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

	p := e.mustPlan(nil)
	api := p.Release("release.api")
	if api.Action != plan.ActionUpgrade || len(api.Drift) != 1 {
		t.Fatalf("action %s, drift %+v", api.Action, api.Drift)
	}
	dr := api.Drift[0]
	if dr.Ref.String() != "apps/v1 Deployment "+ns+"/api" || len(dr.Diff.Changes) != 1 || dr.Diff.Changes[0].Path != "spec.replicas" {
		t.Fatalf("drift: %+v %+v", dr, dr.Diff)
	}
	if !dr.Corrected || dr.Diff.Changes[0].Manager != "kubectl-scale" {
		t.Fatalf("drift correction: %v, manager %q", dr.Corrected, dr.Diff.Changes[0].Manager)
	}
	if p.Release("release.db").Action != plan.ActionNoOp {
		t.Fatalf("db: %s", p.Release("release.db").Action)
	}
	text, js, md := render(t, p)
	if !strings.Contains(text, `~ spec.replicas: 1 → 3 (field manager "kubectl-scale")`) || !strings.Contains(text, "Drift: 1 object.") {
		t.Fatalf("text:\n%s", text)
	}
	if !strings.Contains(md, "Drift (changed outside convoy)") || !strings.Contains(js, `"drifted_objects": 1`) {
		t.Fatalf("markdown:\n%s\njson:\n%s", md, js)
	}
}

func vaultStack(chart, ns string, fail bool) string {
	failWith := ""
	if fail {
		failWith = `failWith = "bad password ${var.password}"`
	}
	return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
variable "password" {
  type      = string
  sensitive = true
}
release "vault" {
  chart  = %[1]q
  values = [{ user = "app" }]
  set_sensitive = { password = var.password }
}
release "web" {
  chart  = %[1]q
  values = [{ user = "web", password = var.password, %[3]s }]
}
`, chart, ns, failWith)
}

func assertMasked(t *testing.T, what string, outputs ...string) {
	t.Helper()
	for _, o := range outputs {
		for _, leak := range []string{canary, "Y2FuYXJ5LVFtNy1kby1ub3QtcHJpbnQ=", "old-" + canary} {
			if strings.Contains(o, leak) {
				t.Fatalf("%s leaks %q:\n%s", what, leak, o)
			}
		}
	}
}

func TestSensitiveValuesNeverShown(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, vaultStack(vaultChart(t), ns, false))
	old := map[string]string{"password": "old-" + canary}
	now := map[string]string{"password": canary}

	p := e.mustPlan(now)
	text, js, md := render(t, p)
	assertMasked(t, "install plan", text, js, md)
	if !strings.Contains(text, plan.SensitivePlaceholder) {
		t.Fatalf("nothing masked:\n%s", text)
	}

	e.deploy(old)
	p = e.mustPlan(now)
	text, js, md = render(t, p)
	assertMasked(t, "upgrade plan", text, js, md)
	var doc struct {
		FormatVersion int `json:"format_version"`
		Releases      []struct {
			Address string `json:"address"`
			Objects []struct {
				Kind    string `json:"kind"`
				Changes []struct {
					Path      string `json:"path"`
					Sensitive bool   `json:"sensitive"`
				} `json:"changes"`
			} `json:"objects"`
		} `json:"releases"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, js)
	}
	masked := map[string]bool{}
	for _, r := range doc.Releases {
		for _, o := range r.Objects {
			for _, c := range o.Changes {
				if c.Sensitive {
					masked[r.Address+" "+o.Kind+" "+c.Path] = true
				}
			}
		}
	}
	for _, want := range []string{
		"release.vault Secret data.password", "release.vault ConfigMap data.dsn",
		"release.web Secret data.password", "release.web Deployment spec.template.spec.containers[name=web].env[name=DB_PASSWORD].value",
	} {
		if !masked[want] {
			t.Errorf("%s not masked; masked: %v", want, masked)
		}
	}

	// The saved plan holds the value (apply needs it), readable by its owner only.
	path := filepath.Join(t.TempDir(), "plan.cvp")
	if err := writePlan(path, p); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("plan file mode: %v %v", fi.Mode(), err)
	}
	if !p.HasSensitive() {
		t.Fatal("HasSensitive false")
	}
	read, err := readPlan(path)
	if err != nil {
		t.Fatal(err)
	}
	text2, js2, md2 := render(t, read)
	assertMasked(t, "saved plan", text2, js2, md2)

	// Errors are masked too.
	writeStack(t, e.dir, vaultStack(vaultChart(t), ns, true))
	_, err = e.plan(now, nil, false)
	if err == nil || !strings.Contains(err.Error(), "cannot render: (sensitive)") {
		t.Fatalf("want a render error, got %v", err)
	}
	assertMasked(t, "error", err.Error())
}

func TestSavedPlanRoundTripAndVerify(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, twoReleases(appChart(t), ns, "v1"))
	e.deploy(nil)
	writeStack(t, e.dir, twoReleases(appChart(t), ns, "v2"))
	p := e.mustPlan(nil)

	path := filepath.Join(t.TempDir(), "plan.cvp")
	if err := writePlan(path, p); err != nil {
		t.Fatal(err)
	}
	read, err := readPlan(path)
	if err != nil {
		t.Fatal(err)
	}
	_, js1, _ := render(t, p)
	_, js2, _ := render(t, read)
	if js1 != js2 {
		t.Fatalf("the saved plan renders differently:\n%s\n---\n%s", js1, js2)
	}
	api := read.Release("release.api")
	if api.Saved == nil || api.Saved.Rendered.Manifest(false) != p.Release("release.api").Saved.Rendered.Manifest(false) ||
		api.Saved.Rendered.Chart.Metadata.Name != "app" || api.Saved.Settings.Labels[release.StackLabel] != ns {
		t.Fatalf("saved release: %+v", api.Saved)
	}
	if api.Observed.LastRevision != 1 || api.Observed.LastStatus != "deployed" || observedVersion(api.Observed, plan.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "api-config"}) == "" {
		t.Fatalf("observed: %+v", api.Observed)
	}
	engineFor := func(string) (*release.Engine, error) { return e.eng, nil }
	ctx := context.Background()
	if err := run.VerifyObserved(ctx, read, engineFor); err != nil {
		t.Fatalf("fresh plan refused: %v", err)
	}
	_, hash := e.load(nil)
	if err := run.VerifyConfig(read, hash); err != nil {
		t.Fatalf("same config refused: %v", err)
	}
	writeStack(t, e.dir, twoReleases(appChart(t), ns, "v3"))
	_, hash = e.load(nil)
	if err := run.VerifyConfig(read, hash); err == nil || !strings.Contains(err.Error(), "stack configuration") {
		t.Fatalf("changed config: %v", err)
	}

	// A controller annotating an affected object does not make the plan
	// stale: apply does not touch that annotation.
	cms := cluster.Client().CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(ctx, "api-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Annotations["example.com/observed-by"] = "a-controller"
	if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "a-controller"}); err != nil {
		t.Fatal(err)
	}
	if err := run.VerifyObserved(ctx, read, engineFor); err != nil {
		t.Fatalf("refused after a controller's annotation: %v", err)
	}

	// Someone edits what apply sets.
	cm.Data["message"] = "edited"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	err = run.VerifyObserved(ctx, read, engineFor)
	var stale *run.StaleError
	if !errors.As(err, &stale) || !strings.Contains(err.Error(), "v1 ConfigMap "+ns+"/api-config was edited since the plan") {
		t.Fatalf("after an edit: %v", err)
	}

	// A new revision (another apply got there first).
	e.deploy(nil)
	err = run.VerifyObserved(ctx, read, engineFor)
	if !errors.As(err, &stale) || !strings.Contains(err.Error(), "release api (namespace "+ns+") has a new revision 2 (deployed) since the plan saw revision 1 (deployed)") {
		t.Fatalf("after a new revision: %v", err)
	}
}

func TestPlanTargets(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, twoReleases(appChart(t), ns, "v1"))
	p, err := e.plan(nil, []string{"release.api"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(p); got != "release.api:install" {
		t.Fatalf("without deps: %s", got)
	}
	p, err = e.plan(nil, []string{"release.api"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(p); got != "release.db:install release.api:install" || !p.IncludeDeps || fmt.Sprint(p.Targets) != "[release.api]" {
		t.Fatalf("with deps: %s", got)
	}
}

func TestPlanKnownAfterApply(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "db" {
  chart = %[1]q
}
release "api" {
  chart  = %[1]q
  values = [{ message = "db at revision ${release.db.revision}" }]
}
`, appChart(t), ns))
	p := e.mustPlan(nil)
	api := p.Release("release.api")
	if api.Action != plan.ActionInstall || !api.KnownAfterApply || api.Saved != nil || fmt.Sprint(api.DependsOn) != "[release.db]" ||
		api.Chart.After == nil || api.Chart.After.Name != "app" {
		t.Fatalf("api: %+v", api)
	}
	text, js, _ := render(t, p)
	if !strings.Contains(text, "(known after apply)") || !strings.Contains(js, `"known_after_apply": true`) {
		t.Fatalf("text:\n%s\njson:\n%s", text, js)
	}
}

// TestPlanChainLongerThanThePool: each release reads the revision of the
// one before, and there are more of them than goroutines planning at
// parallelism 1. Each waits for its dependency's plan; the releases are
// taken in order, so the plan completes.
func TestPlanChainLongerThanThePool(t *testing.T) {
	ns := cluster.Namespace(t)
	chart := filepath.Join(t.TempDir(), "note")
	testfiles.Write(t, chart, map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: note\nversion: 0.1.0\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  message: {{ .Values.message | default \"first\" | quote }}\n",
	})
	n := 3 * max(2, 4*runtime.GOMAXPROCS(0))
	var b strings.Builder
	fmt.Fprintf(&b, "stack %q {\n  default_namespace = %q\n}\nrelease \"r0\" {\n  chart = %q\n}\n", ns, ns, chart)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "release \"r%d\" {\n  chart  = %q\n  values = [{ message = \"after ${release.r%d.revision}\" }]\n}\n", i, chart, i-1)
	}
	e := newEnv(t, b.String())
	st, hash := e.load(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := planner.Compute(ctx, planner.Input{
		Stack: st, Engine: e.engine, Charts: resolve.NewCharts(t.TempDir()), ConfigHash: hash, Parallelism: 1,
		Request: func(r *resolve.Release) *release.Request { return run.ReleaseRequest(st.Name, r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Releases) != n {
		t.Fatalf("%d releases planned, want %d", len(p.Releases), n)
	}
	for i, rc := range p.Releases {
		if rc.Action != plan.ActionInstall || rc.KnownAfterApply != (i > 0) {
			t.Fatalf("%s: %s, known after apply %v", rc.Addr, rc.Action, rc.KnownAfterApply)
		}
	}
}

func TestPlanReplaceOnImmutableField(t *testing.T) {
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

func TestPlanUninstallsRemovedReleases(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, twoReleases(appChart(t), ns, "v1"))
	e.deploy(nil)
	writeStack(t, e.dir, dbOnly(appChart(t), ns))
	p := e.mustPlan(nil)
	if got := actions(p); got != "release.db:no-op removed:"+ns+"/api:uninstall" {
		t.Fatalf("actions: %s", got)
	}
	api := p.Releases[1]
	var deleted []string
	for _, o := range api.Objects {
		if o.Action == plan.ObjectDelete {
			deleted = append(deleted, o.Ref.String())
		}
	}
	want := []string{"apps/v1 Deployment " + ns + "/api", "v1 ConfigMap " + ns + "/api-config"}
	if !slices.Equal(deleted, want) || api.Observed.LastRevision != 1 || api.Saved != nil {
		t.Fatalf("uninstall: deleted %q (want %q), observed %+v", deleted, want, api.Observed)
	}
	// A targeted plan uninstalls nothing.
	p, err := e.plan(nil, []string{"release.db"}, false)
	if err != nil || actions(p) != "release.db:no-op" {
		t.Fatalf("targeted: %v %s", err, actions(p))
	}
}

// TestPlanFindsRemovedReleasesInEveryNamespace: releases the stack no
// longer declares are uninstalled in a namespace it still declares (found
// in that namespace's records, which the plan lists anyway) and in one it
// no longer declares (found by the label's list, which leaves the declared
// namespaces out). Another stack's release is left alone.
func TestPlanFindsRemovedReleasesInEveryNamespace(t *testing.T) {
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

func TestPlanListsHooksThatRun(t *testing.T) {
	ns := cluster.Namespace(t)
	stack := func(msg string) string {
		return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "api" {
  chart  = %[1]q
  values = [{ message = %[3]q, preUpgradeHook = true }]
}
`, appChart(t), ns, msg)
	}
	e := newEnv(t, stack("v1"))
	p := e.mustPlan(nil)
	if h := p.Release("release.api").Hooks; len(h) != 0 {
		t.Fatalf("install runs no pre-upgrade hook: %+v", h)
	}
	e.deploy(nil)
	if p = e.mustPlan(nil); p.HasChanges() || len(p.Release("release.api").Hooks) != 0 {
		t.Fatalf("no-op runs no hooks: %+v", p.Release("release.api"))
	}
	writeStack(t, e.dir, stack("v2"))
	p = e.mustPlan(nil)
	h := p.Release("release.api").Hooks
	if len(h) != 1 || h[0].Name != "api-pre-upgrade" || h[0].Kind != "Job" || !slices.Equal(h[0].Events, []string{"pre-upgrade"}) {
		t.Fatalf("hooks: %+v", h)
	}
	if text, _, _ := render(t, p); !strings.Contains(text, "hook pre-upgrade: Job api-pre-upgrade") {
		t.Fatalf("text:\n%s", text)
	}
}

func TestPlanKindsNotServedYet(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "widget" {
  chart = %[1]q
}
`, chartPath(t, "testdata", "charts", "widget"), ns))
	p := e.mustPlan(nil)
	w := p.Release("release.widget")
	if w.Action != plan.ActionInstall || w.Saved == nil || len(w.Warnings) != 1 || !strings.Contains(w.Warnings[0], "Widget") {
		t.Fatalf("widget: %+v", w)
	}
	// The object is listed, with its kind and what apply needs (issue #16:
	// a release of an unknown kind used to show zero objects).
	if len(w.Objects) != 1 || w.Objects[0].Action != plan.ObjectCreate || w.Objects[0].Ref.Kind != "Widget" ||
		!strings.Contains(w.Objects[0].Reason, "not served") || !strings.Contains(w.Objects[0].Reason, "apply fails unless") {
		t.Fatalf("widget objects: %+v", w.Objects)
	}
}

func TestVerifyRefusesAfterHelmUpgrade(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, twoReleases(appChart(t), ns, "v1"))
	e.deploy(nil)
	writeStack(t, e.dir, twoReleases(appChart(t), ns, "v2"))
	p := e.mustPlan(nil)
	engineFor := func(string) (*release.Engine, error) { return e.eng, nil }
	if err := run.VerifyObserved(context.Background(), p, engineFor); err != nil {
		t.Fatalf("fresh plan refused: %v", err)
	}
	if out, err := cluster.Helm(t, "upgrade", "db", appChart(t), "-n", ns, "--set", "message=from-helm"); err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	err := run.VerifyObserved(context.Background(), p, engineFor)
	if err == nil || !strings.Contains(err.Error(), "release db (namespace "+ns+") has a new revision 2 (deployed) since the plan saw revision 1 (deployed)") {
		t.Fatalf("after helm upgrade: %v", err)
	}
	// The edit of db's ConfigMap is named too.
	if !strings.Contains(err.Error(), "v1 ConfigMap "+ns+"/db-config was edited since the plan") {
		t.Fatalf("edited object not named: %v", err)
	}
}

func TestPlanWarnsAboutObjectsItMayNotAdopt(t *testing.T) {
	ns := cluster.Namespace(t)
	_, err := cluster.Client().CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "api-config"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, twoReleases(appChart(t), ns, "v1"))
	p := e.mustPlan(nil)
	api := p.Release("release.api")
	if len(api.Warnings) != 1 || !strings.Contains(api.Warnings[0], "v1 ConfigMap "+ns+"/api-config exists and is not owned by release api") {
		t.Fatalf("warnings: %q", api.Warnings)
	}
}

func observedVersion(o plan.Observed, ref plan.ObjectRef) string {
	ob, _ := o.Object(ref)
	return ob.ResourceVersion
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
	st, _ := e.load(nil)
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
