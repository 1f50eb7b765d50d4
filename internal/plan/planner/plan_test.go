package planner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planfile"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/plan/view"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What users read in a plan — its actions, diffs, drift, hooks, masked
// secrets, the saved plan and its verification — planned against
// planner/plannertest (newMem), so that these run under -short. What only
// the API server shows is proven on the devcluster (devcluster_test.go).

const canary = "canary-Qm7-do-not-print"

func chartPath(t *testing.T, parts ...string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// appChart is internal/cluster/release's test chart: a ConfigMap printing the
// message and the revision, a Deployment, and optional hooks and objects.
func appChart(t *testing.T) string {
	return chartPath(t, "..", "..", "cluster", "release", "testdata", "charts", "app")
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

// saved is p saved and read again, as convoy plan --out and convoy apply
// PLANFILE do.
func saved(t *testing.T, p *plan.Plan) *plan.Plan {
	t.Helper()
	b, err := planfile.Encode(&planfile.File{Plan: p})
	if err != nil {
		t.Fatal(err)
	}
	f, err := planfile.Decode(b, "plan.cvp")
	if err != nil {
		t.Fatal(err)
	}
	return f.Plan
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

// objectOf is the change of rc's object of kind (the first).
func objectOf(rc *plan.ReleaseChange, kind string) *plan.ObjectChange {
	for _, o := range rc.Objects {
		if o.Ref.Kind == kind {
			return o
		}
	}
	return nil
}

func TestPlanInstallNoChangesUpgrade(t *testing.T) {
	m := newMem(t, twoReleases(appChart(t), "shop", "v1"))

	p := m.mustPlan(nil, planner.ObserveContent)
	if got := actions(p); got != "release.db:install release.api:install" {
		t.Fatalf("actions: %s", got)
	}
	if s := p.Summary().String(); s != "Plan: 2 to install, 0 to upgrade, 0 to uninstall, 0 unchanged." {
		t.Fatalf("summary: %s", s)
	}
	m.deploy()

	p = m.mustPlan(nil, planner.ObserveContent)
	if p.HasChanges() || actions(p) != "release.db:no-op release.api:no-op" {
		text, _, _ := render(t, p)
		t.Fatalf("unchanged stack has changes: %s\n%s", actions(p), text)
	}

	m.rewrite(twoReleases(appChart(t), "shop", "v2"))
	p = m.mustPlan(nil, planner.ObserveContent)
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
	m := newMem(t, twoReleases(appChart(t), "shop", "v1"))
	m.deploy()

	// kubectl scale: another field manager updates the replicas.
	apiDeployment := ref("apps", "v1", "Deployment", "shop", "api")
	if err := m.v.EditAs(context.Background(), "kubectl-scale", apiDeployment, setReplicas(3)); err != nil {
		t.Fatal(err)
	}

	p := m.mustPlan(nil, planner.ObserveContent)
	api := p.Release("release.api")
	if api.Action != plan.ActionUpgrade || len(api.Drift) != 1 {
		t.Fatalf("action %s, drift %+v", api.Action, api.Drift)
	}
	dr := api.Drift[0]
	if dr.Ref.String() != "apps/v1 Deployment shop/api" || len(dr.Diff.Changes) != 1 || dr.Diff.Changes[0].Path != "spec.replicas" {
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
	m := newMem(t, vaultStack(vaultChart(t), "shop", false))
	m.vars = map[string]string{"password": canary}

	p := m.mustPlan(nil, planner.ObserveContent)
	text, js, md := render(t, p)
	assertMasked(t, "install plan", text, js, md)
	if !strings.Contains(text, plan.SensitivePlaceholder) {
		t.Fatalf("nothing masked:\n%s", text)
	}

	m.vars = map[string]string{"password": "old-" + canary}
	m.deploy()
	m.vars = map[string]string{"password": canary}
	p = m.mustPlan(nil, planner.ObserveContent)
	text, js, md = render(t, p)
	assertMasked(t, "upgrade plan", text, js, md)
	var doc struct {
		Releases []struct {
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

	// The saved plan holds the value (apply needs it); what it shows is
	// masked as the plan's.
	if !p.HasSensitive() {
		t.Fatal("HasSensitive false")
	}
	text2, js2, md2 := render(t, saved(t, p))
	assertMasked(t, "saved plan", text2, js2, md2)

	// Errors are masked too.
	m.rewrite(vaultStack(vaultChart(t), "shop", true))
	_, err := m.plan(nil, planner.ObserveContent)
	if err == nil || !strings.Contains(err.Error(), "cannot render: (sensitive)") {
		t.Fatalf("want a render error, got %v", err)
	}
	assertMasked(t, "error", err.Error())
}

// A saved plan renders as the plan did and carries what apply needs and
// what verification compares: it holds while nothing it observed moved,
// or only what a controller writes beside convoy, and is refused, naming
// why, after an edit of what apply sets or a new revision.
func TestSavedPlanRoundTripAndVerify(t *testing.T) {
	ctx := context.Background()
	m := newMem(t, twoReleases(appChart(t), "shop", "v1"))
	m.deploy()
	m.rewrite(twoReleases(appChart(t), "shop", "v2"))
	p := m.mustPlan(nil, planner.ObserveContent)

	read := saved(t, p)
	_, js1, _ := render(t, p)
	_, js2, _ := render(t, read)
	if js1 != js2 {
		t.Fatalf("the saved plan renders differently:\n%s\n---\n%s", js1, js2)
	}
	api := read.Release("release.api")
	if api.Saved == nil || api.Saved.Rendered.Manifest(false) != p.Release("release.api").Saved.Rendered.Manifest(false) ||
		api.Saved.Rendered.Chart.Metadata.Name != "app" || api.Saved.Settings.Labels[release.StackLabel] != "shop" {
		t.Fatalf("saved release: %+v", api.Saved)
	}
	apiConfig := ref("", "v1", "ConfigMap", "shop", "api-config")
	if ob, ok := api.Observed.Object(plan.ObjectRef(apiConfig)); api.Observed.LastRevision != 1 || api.Observed.LastStatus != "deployed" || !ok || ob.ResourceVersion == "" {
		t.Fatalf("observed: %+v", api.Observed)
	}
	checkMoved(t, m.verify(read), "")

	// A controller annotating an affected object does not make the plan
	// stale: apply does not touch that annotation.
	if err := m.v.EditAs(ctx, "a-controller", apiConfig, func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		a["example.com/observed-by"] = "a-controller"
		u.SetAnnotations(a)
	}); err != nil {
		t.Fatal(err)
	}
	checkMoved(t, m.verify(read), "")

	// Someone edits what apply sets.
	if err := m.v.Edit(ctx, apiConfig, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "edited", "data", "message")
	}); err != nil {
		t.Fatal(err)
	}
	checkMoved(t, m.verify(read), "v1 ConfigMap shop/api-config was edited since the plan")

	// A new revision (another apply got there first).
	m.deploy()
	moved := m.verify(read)
	if !slices.Contains(moved, "release api (namespace shop) has a new revision 2 (deployed) since the plan saw revision 1 (deployed)") {
		t.Fatalf("after a new revision: %q", moved)
	}
}

func TestPlanKnownAfterApply(t *testing.T) {
	m := newMem(t, fmt.Sprintf(`
stack "shop" {
  default_namespace = "shop"
}
release "db" {
  chart = %[1]q
}
release "api" {
  chart  = %[1]q
  values = [{ message = "db at revision ${release.db.revision}" }]
}
`, appChart(t)))
	p := m.mustPlan(nil, planner.ObserveContent)
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

// immutableStack is release web of the vault chart, whose tier is part of
// its Deployment's selector.
func immutableStack(t *testing.T, ns, tier string) string {
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

// A change of an immutable field (a Deployment's selector), refused by the
// dry run, is planned as a replacement and shown as one.
func TestPlanReplaceOnImmutableField(t *testing.T) {
	m := newMem(t, immutableStack(t, "shop", ""))
	m.deploy()
	m.rewrite(immutableStack(t, "shop", "front"))
	p := m.mustPlan(nil, planner.ObserveContent)
	web := p.Release("release.web")
	dep := objectOf(web, "Deployment")
	if web.Action != plan.ActionUpgrade || dep == nil || dep.Action != plan.ObjectReplace || !strings.Contains(dep.Reason, "immutable") {
		t.Fatalf("deployment: %+v", dep)
	}
	if cm := objectOf(web, "ConfigMap"); cm == nil || cm.Action != plan.ObjectNoOp {
		t.Errorf("configmap: %+v, want a no-op", cm)
	}
	text, _, _ := render(t, p)
	if !strings.Contains(text, "-/+ apps/v1 Deployment shop/web") || !strings.Contains(text, `+ spec.selector.matchLabels.tier: "front"`) {
		t.Fatalf("text:\n%s", text)
	}
}

// Releases the stack no longer declares are uninstalled in a namespace it
// still declares and in one it no longer declares; another stack's
// release beside them is left alone.
func TestPlanFindsRemovedReleasesInEveryNamespace(t *testing.T) {
	chart := appChart(t)
	m := newMem(t, twoReleases(chart, "shop", "api")+fmt.Sprintf(`
release "far" {
  chart     = %[1]q
  namespace = "far"
  values    = [{ message = "far" }]
}
`, chart))
	m.deploy()
	neighbour := &mem{t: t, dir: filepath.Join(t.TempDir(), "neighbour"), v: m.v, charts: m.charts}
	writeStack(t, neighbour.dir, fmt.Sprintf(`
stack "neighbour" {
  default_namespace = "shop"
}
release "nb" {
  chart  = %[1]q
  values = [{ message = "nb" }]
}
`, chart))
	neighbour.deploy()
	m.rewrite(dbOnly(chart, "shop"))

	var stats planner.Stats
	p := m.mustPlan(&stats, planner.ObserveContent)
	if got, want := actions(p), "release.db:no-op removed:far/far:uninstall removed:shop/api:uninstall"; got != want {
		t.Fatalf("actions: %s, want %s", got, want)
	}
	for _, rc := range p.Releases[1:] {
		if d := objectOf(rc, "Deployment"); d == nil || d.Action != plan.ObjectDelete || rc.Observed.LastRevision != 1 {
			t.Errorf("%s: deployment %+v, observed %+v: want its Deployment deleted, revision 1 observed", rc.Addr, d, rc.Observed)
		}
	}
}

func TestPlanListsHooksThatRun(t *testing.T) {
	stack := func(msg string) string {
		return fmt.Sprintf(`
stack "shop" {
  default_namespace = "shop"
}
release "api" {
  chart  = %[1]q
  values = [{ message = %[2]q, preUpgradeHook = true }]
}
`, appChart(t), msg)
	}
	m := newMem(t, stack("v1"))
	p := m.mustPlan(nil, planner.ObserveContent)
	if h := p.Release("release.api").Hooks; len(h) != 0 {
		t.Fatalf("install runs no pre-upgrade hook: %+v", h)
	}
	m.deploy()
	if p = m.mustPlan(nil, planner.ObserveContent); p.HasChanges() || len(p.Release("release.api").Hooks) != 0 {
		t.Fatalf("no-op runs no hooks: %+v", p.Release("release.api"))
	}
	m.rewrite(stack("v2"))
	p = m.mustPlan(nil, planner.ObserveContent)
	h := p.Release("release.api").Hooks
	if len(h) != 1 || h[0].Name != "api-pre-upgrade" || h[0].Kind != "Job" || !slices.Equal(h[0].Events, []string{"pre-upgrade"}) {
		t.Fatalf("hooks: %+v", h)
	}
	if text, _, _ := render(t, p); !strings.Contains(text, "hook pre-upgrade: Job api-pre-upgrade") {
		t.Fatalf("text:\n%s", text)
	}
}

func TestPlanKindsNotServedYet(t *testing.T) {
	m := newMem(t, fmt.Sprintf(`
stack "shop" {
  default_namespace = "shop"
}
release "widget" {
  chart = %[1]q
}
`, chartPath(t, "testdata", "charts", "widget")))
	p := m.mustPlan(nil, planner.ObserveContent)
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

// A plan is refused once another client upgraded a release it observed
// (here a release written without convoy's labels, as helm writes it),
// naming the new revision and the object it changed.
func TestVerifyRefusesAfterAnotherClientsUpgrade(t *testing.T) {
	m := newMem(t, twoReleases(appChart(t), "shop", "v1"))
	m.deploy()
	m.rewrite(twoReleases(appChart(t), "shop", "v2"))
	p := m.mustPlan(nil, planner.ObserveContent)
	checkMoved(t, m.verify(p), "")

	helm := &mem{t: t, dir: filepath.Join(t.TempDir(), "helm"), v: m.v, charts: m.charts}
	writeStack(t, helm.dir, strings.Replace(twoReleases(appChart(t), "shop", "v2"), `message = "db"`, `message = "from-helm"`, 1))
	req := helm.request(helm.load(), "release.db")
	for _, l := range []string{release.StackLabel, release.AddressLabel, release.FingerprintLabel} {
		delete(req.Labels, l)
	}
	if _, err := m.v.Deploy(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	moved := strings.Join(m.verify(p), "\n")
	for _, want := range []string{
		"release db (namespace shop) has a new revision 2 (deployed) since the plan saw revision 1 (deployed)",
		"v1 ConfigMap shop/db-config was edited since the plan",
	} {
		if !strings.Contains(moved, want) {
			t.Errorf("moved:\n%s\nwant %q", moved, want)
		}
	}
}
