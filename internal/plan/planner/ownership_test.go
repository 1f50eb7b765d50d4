package planner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
)

// scale changes a Deployment's replicas through the scale subresource as
// field manager "kubectl", as `kubectl scale` does.
func scale(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	ctx := context.Background()
	deps := cluster.Client().AppsV1().Deployments(ns)
	// As kubectl scale: the Deployment's controller may write its status
	// between the read and the update.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := deps.GetScale(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Replicas = replicas
		_, err = deps.UpdateScale(ctx, name, s, metav1.UpdateOptions{FieldManager: "kubectl"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// replicasOf returns a Deployment's replicas and the managers owning them.
func replicasOf(t *testing.T, ns, name string) (int32, []string) {
	t.Helper()
	d, err := cluster.Client().AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var owners []string
	for _, mf := range d.ManagedFields {
		var fields struct {
			Spec map[string]any `json:"f:spec"`
		}
		if mf.FieldsV1 != nil && json.Unmarshal(mf.FieldsV1.Raw, &fields) == nil && fields.Spec["f:replicas"] != nil {
			owners = append(owners, mf.Manager)
		}
	}
	return *d.Spec.Replicas, owners
}

// applySaved applies a saved plan's release as convoy apply PLAN_FILE does.
func (e *env) applySaved(p *plan.Plan, addr string) {
	e.t.Helper()
	read := saved(e.t, p)
	if moved := e.verify(read); len(moved) > 0 {
		e.t.Fatalf("saved plan refused: %q", moved)
	}
	ctx := context.Background()
	rc := read.Release(addr)
	req := planner.RequestOf(rc.Name, rc.Namespace, rc.Saved.Settings)
	prep, err := e.eng.PrepareRendered(ctx, &req, rc.Saved.Rendered)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.eng.Execute(ctx, prep); err != nil {
		e.t.Fatalf("apply of the saved plan: %v", err)
	}
}

// applySaved applies a saved plan's release as convoy apply PLAN_FILE
// does, once planner.Verify holds.
func (m *mem) applySaved(p *plan.Plan, addr string) {
	m.t.Helper()
	read := saved(m.t, p)
	checkMoved(m.t, m.verify(read), "")
	rc := read.Release(addr)
	req := planner.RequestOf(rc.Name, rc.Namespace, rc.Saved.Settings)
	if _, err := m.v.DeployRendered(context.Background(), &req, rc.Saved.Rendered); err != nil {
		m.t.Fatalf("apply of the saved plan: %v", err)
	}
}

// liveReplicas are a live Deployment's replicas and the managers owning
// them.
func liveReplicas(t *testing.T, m *mem, name string) (int64, []string) {
	t.Helper()
	live, err := m.v.Live(context.Background(), ref("apps", "v1", "Deployment", "shop", name))
	if err != nil || live == nil {
		t.Fatalf("deployment %s: %v", name, err)
	}
	n, _, _ := unstructured.NestedInt64(live.Object, "spec", "replicas")
	var owners []string
	for _, o := range kube.OwnersOf(live, kube.Pointer{"spec", "replicas"}) {
		owners = append(owners, o.Manager)
	}
	return n, owners
}

// After `kubectl scale`, the plan shows the drift and who made it, a saved
// plan restores it without flags, and the next plan is clean.
func TestMemScaledReplicasAreDriftThatApplyRestores(t *testing.T) {
	m := newMem(t, twoReleases(appChart(t), "shop", "v1"))
	m.deploy()
	if err := m.v.EditAs(context.Background(), "kubectl", ref("apps", "v1", "Deployment", "shop", "api"), setReplicas(4)); err != nil {
		t.Fatal(err)
	}

	p := m.mustPlan(nil, planner.ObserveContent)
	api := p.Release("release.api")
	if got := actions(p); got != "release.db:no-op release.api:upgrade" || len(api.Drift) != 1 {
		t.Fatalf("actions %s, drift %+v", got, api.Drift)
	}
	dr := api.Drift[0]
	if dr.Ref.String() != "apps/v1 Deployment shop/api" || !dr.Corrected || len(dr.Diff.Changes) != 1 {
		t.Fatalf("drift: %+v %+v", dr, dr.Diff)
	}
	if c := dr.Diff.Changes[0]; c.Path != "spec.replicas" || c.Manager != "kubectl" || fmt.Sprintf("%v %v", c.Before, c.After) != "1 4" {
		t.Fatalf("drifted field: %+v", c)
	}
	dep := objectOf(api, "Deployment")
	if dep == nil || dep.Action != plan.ObjectUpdate || len(dep.Diff.Changes) != 1 || dep.Diff.Changes[0].Manager != "kubectl" {
		t.Fatalf("deployment change: %+v", dep)
	}
	text, js, _ := render(t, p)
	if !strings.Contains(text, `~ spec.replicas: 1 → 4 (field manager "kubectl")`) || !strings.Contains(text, `~ spec.replicas: 4 → 1 (field manager "kubectl")`) ||
		!strings.Contains(text, "apply restores it") || !strings.Contains(js, `"manager": "kubectl"`) {
		t.Fatalf("text:\n%s\njson:\n%s", text, js)
	}

	m.applySaved(p, "release.api")
	if n, owners := liveReplicas(t, m, "api"); n != 1 || !slices.Equal(owners, []string{"helm"}) {
		t.Fatalf("after apply: %d replicas owned by %v", n, owners)
	}
	if p := m.mustPlan(nil, planner.ObserveContent); p.HasChanges() {
		text, _, _ := render(t, p)
		t.Fatalf("the plan after restoring is not clean:\n%s", text)
	}
}

// With ignore_changes on /spec/replicas, the replicas are created as
// rendered and then left to whoever scales: neither drift nor restored,
// also by an upgrade for another reason.
func TestMemIgnoredReplicasAreLeftToOthers(t *testing.T) {
	m := newMem(t, ignoreReplicas(appChart(t), "shop"))
	m.deploy()
	if n, _ := liveReplicas(t, m, "api"); n != 2 {
		t.Fatalf("created with %d replicas, want the rendered 2", n)
	}
	if p := m.mustPlan(nil, planner.ObserveContent); p.HasChanges() {
		text, _, _ := render(t, p)
		t.Fatalf("plan after install:\n%s", text)
	}
	if err := m.v.EditAs(context.Background(), "kubectl", ref("apps", "v1", "Deployment", "shop", "api"), setReplicas(4)); err != nil {
		t.Fatal(err)
	}
	p := m.mustPlan(nil, planner.ObserveContent)
	if api := p.Release("release.api"); api.Action != plan.ActionNoOp || len(api.Drift) != 0 {
		text, _, _ := render(t, p)
		t.Fatalf("a scaled, ignored field is drift:\n%s", text)
	}
	m.rewrite(strings.Replace(ignoreReplicas(appChart(t), "shop"), `message = "v1"`, `message = "v2"`, 1))
	p = m.mustPlan(nil, planner.ObserveContent)
	if dep := objectOf(p.Release("release.api"), "Deployment"); dep == nil || dep.Action != plan.ObjectNoOp {
		t.Fatalf("deployment: %+v", dep)
	}
	m.applySaved(p, "release.api")
	if n, owners := liveReplicas(t, m, "api"); n != 4 || !slices.Equal(owners, []string{"kubectl"}) {
		t.Fatalf("after apply: %d replicas owned by %v, want 4 by kubectl", n, owners)
	}
	if p := m.mustPlan(nil, planner.ObserveContent); p.HasChanges() {
		text, _, _ := render(t, p)
		t.Fatalf("plan after apply:\n%s", text)
	}
}

// Fields only controllers write (the Deployment revision annotation, a
// label, status) are never drift.
func TestMemControllerWrittenFieldsAreNotDrift(t *testing.T) {
	m := newMem(t, twoReleases(appChart(t), "shop", "v1"))
	m.deploy()
	if err := m.v.EditAs(context.Background(), "kube-controller-manager", ref("apps", "v1", "Deployment", "shop", "api"), func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		a["deployment.kubernetes.io/revision"] = "7"
		u.SetAnnotations(a)
		l := u.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l["example.com/scanned"] = "true"
		u.SetLabels(l)
		_ = unstructured.SetNestedField(u.Object, int64(1), "status", "readyReplicas")
	}); err != nil {
		t.Fatal(err)
	}
	for _, o := range observes {
		if p := m.mustPlan(nil, o.observe); p.HasChanges() {
			text, _, _ := render(t, p)
			t.Fatalf("%s: plan after a controller's writes:\n%s", o.name, text)
		}
	}
}

// After `kubectl scale`, the plan shows the drift and who made it, a saved
// plan restores it without flags, and the next plan is clean. Against the
// API server: the scale subresource, server-side apply taking the
// replicas back (TestMemScaledReplicasAreDriftThatApplyRestores plans
// the same against plannertest).
func TestScaledReplicasAreDriftThatApplyRestores(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, twoReleases(appChart(t), ns, "v1"))
	e.deploy(nil)
	scale(t, ns, "api", 4)

	p := e.mustPlan(nil)
	api := p.Release("release.api")
	if got := actions(p); got != "release.db:no-op release.api:upgrade" || len(api.Drift) != 1 {
		t.Fatalf("actions %s, drift %+v", got, api.Drift)
	}
	dr := api.Drift[0]
	if dr.Ref.String() != "apps/v1 Deployment "+ns+"/api" || !dr.Corrected || len(dr.Diff.Changes) != 1 {
		t.Fatalf("drift: %+v %+v", dr, dr.Diff)
	}
	if c := dr.Diff.Changes[0]; c.Path != "spec.replicas" || c.Manager != "kubectl" || fmt.Sprintf("%v %v", c.Before, c.After) != "1 4" {
		t.Fatalf("drifted field: %+v", c)
	}
	var dep *plan.ObjectChange
	for _, o := range api.Objects {
		if o.Ref.Kind == "Deployment" {
			dep = o
		}
	}
	if dep == nil || dep.Action != plan.ObjectUpdate || len(dep.Diff.Changes) != 1 || dep.Diff.Changes[0].Manager != "kubectl" {
		t.Fatalf("deployment change: %+v", dep)
	}
	text, js, _ := render(t, p)
	if !strings.Contains(text, `~ spec.replicas: 1 → 4 (field manager "kubectl")`) || !strings.Contains(text, `~ spec.replicas: 4 → 1 (field manager "kubectl")`) ||
		!strings.Contains(text, "apply restores it") || !strings.Contains(js, `"manager": "kubectl"`) {
		t.Fatalf("text:\n%s\njson:\n%s", text, js)
	}

	e.applySaved(p, "release.api")
	if n, owners := replicasOf(t, ns, "api"); n != 1 || !slices.Equal(owners, []string{"helm"}) {
		t.Fatalf("after apply: %d replicas owned by %v", n, owners)
	}
	if p := e.mustPlan(nil); p.HasChanges() {
		text, _, _ := render(t, p)
		t.Fatalf("the plan after restoring is not clean:\n%s", text)
	}

	// Unsaved, the same.
	scale(t, ns, "api", 3)
	e.deploy(nil)
	if n, _ := replicasOf(t, ns, "api"); n != 1 {
		t.Fatalf("after deploy: %d replicas", n)
	}
}

func ignoreReplicas(chart, ns string) string {
	return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "api" {
  chart          = %[1]q
  values         = [{ message = "v1", replicas = 2 }]
  ignore_changes = [{ kind = "Deployment", paths = ["/spec/replicas"] }]
}
`, chart, ns)
}

// With ignore_changes on /spec/replicas, the replicas are created as
// rendered and then left to whoever scales: neither drift nor restored.
// Against the API server's server-side apply
// (TestMemIgnoredReplicasAreLeftToOthers plans the same against plannertest).
func TestIgnoredReplicasAreLeftToOthers(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, ignoreReplicas(appChart(t), ns))
	e.deploy(nil)
	if n, _ := replicasOf(t, ns, "api"); n != 2 {
		t.Fatalf("created with %d replicas, want the rendered 2", n)
	}
	if p := e.mustPlan(nil); p.HasChanges() {
		text, _, _ := render(t, p)
		t.Fatalf("plan after install:\n%s", text)
	}
	scale(t, ns, "api", 4)
	p := e.mustPlan(nil)
	if api := p.Release("release.api"); api.Action != plan.ActionNoOp || len(api.Drift) != 0 {
		text, _, _ := render(t, p)
		t.Fatalf("a scaled, ignored field is drift:\n%s", text)
	}
	// An upgrade for another reason leaves the replicas alone too.
	writeStack(t, e.dir, strings.Replace(ignoreReplicas(appChart(t), ns), `message = "v1"`, `message = "v2"`, 1))
	p = e.mustPlan(nil)
	for _, o := range p.Release("release.api").Objects {
		if o.Ref.Kind == "Deployment" && o.Action != plan.ObjectNoOp {
			t.Fatalf("deployment: %s %+v", o.Action, o.Diff)
		}
	}
	e.applySaved(p, "release.api")
	if n, owners := replicasOf(t, ns, "api"); n != 4 || !slices.Equal(owners, []string{"kubectl"}) {
		t.Fatalf("after apply: %d replicas owned by %v, want 4 by kubectl", n, owners)
	}
	if p := e.mustPlan(nil); p.HasChanges() {
		text, _, _ := render(t, p)
		t.Fatalf("plan after apply:\n%s", text)
	}
}

// Fields only controllers write (the Deployment revision annotation,
// status, defaults) are never drift, whenever they appear: right after
// the apply, while the real controllers write
// (TestMemControllerWrittenFieldsAreNotDrift plans the same against
// plannertest).
func TestControllerWrittenFieldsAreNotDrift(t *testing.T) {
	ns := cluster.Namespace(t)
	const n = 30
	e := newEnv(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "app" {
  count  = %[3]d
  chart  = %[1]q
  wait   = false
  values = [{ message = "m" }]
}
`, appChart(t), ns, n))
	e.deploy(nil)
	// Right after applying, while the deployment controller annotates.
	if p := e.mustPlan(nil); p.HasChanges() {
		text, _, _ := render(t, p)
		t.Fatalf("plan right after apply:\n%s", text)
	}
	// A controller's write to a field convoy does not set, at any time.
	ctx := context.Background()
	deps := cluster.Client().AppsV1().Deployments(ns)
	d, err := deps.Get(ctx, "app-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Annotations["deployment.kubernetes.io/revision"] = "7"
	d.Labels["example.com/scanned"] = "true"
	if _, err := deps.Update(ctx, d, metav1.UpdateOptions{FieldManager: "kube-controller-manager"}); err != nil {
		t.Fatal(err)
	}
	if p := e.mustPlan(nil); p.HasChanges() {
		text, _, _ := render(t, p)
		t.Fatalf("plan after a controller's annotation:\n%s", text)
	}
}

// helm upgrade --reuse-values and helm rollback of a convoy release need no
// flags, and convoy's next plan shows exactly what differs.
func TestPlanAfterHelmUpgradeAndRollback(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, twoReleases(appChart(t), ns, "v1"))
	e.deploy(nil)
	if out, err := cluster.Helm(t, "upgrade", "api", appChart(t), "-n", ns, "--reuse-values", "--set", "message=from-helm"); err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	p := e.mustPlan(nil)
	api := p.Release("release.api")
	if got := actions(p); got != "release.db:no-op release.api:upgrade" || len(api.Drift) != 0 || len(api.Warnings) != 0 {
		t.Fatalf("actions %s, drift %+v, warnings %q", got, api.Drift, api.Warnings)
	}
	if c := api.Values.Changes; len(c) != 1 || fmt.Sprintf("%s %v %v", c[0].Path, c[0].Before, c[0].After) != "message from-helm v1" {
		t.Fatalf("values: %+v", api.Values)
	}
	if got := objectChanges(api); got != `ConfigMap data.message "from-helm"→"v1"; ConfigMap data.revision "2"→"3"` {
		t.Fatalf("object changes: %s", got)
	}

	if out, err := cluster.Helm(t, "rollback", "api", "1", "-n", ns); err != nil {
		t.Fatalf("helm rollback: %v\n%s", err, out)
	}
	p = e.mustPlan(nil)
	api = p.Release("release.api")
	if api.Values != nil || len(api.Drift) != 0 {
		t.Fatalf("values %+v, drift %+v", api.Values, api.Drift)
	}
	// The chart prints the revision: nothing else differs.
	if got := objectChanges(api); got != `ConfigMap data.revision "1"→"4"` {
		t.Fatalf("object changes after helm rollback: %s", got)
	}
}

func objectChanges(rc *plan.ReleaseChange) string {
	var out []string
	for _, o := range rc.Objects {
		if o.Diff == nil || o.Action == plan.ObjectNoOp {
			continue
		}
		for _, c := range o.Diff.Changes {
			s := fmt.Sprintf("%s %s %q→%q", o.Ref.Kind, c.Path, c.Before, c.After)
			if c.Manager != "" {
				s += " by " + c.Manager
			}
			out = append(out, s)
		}
	}
	return strings.Join(out, "; ")
}
