package planner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/plan/planner/plannertest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The planner's decisions, planned against planner/plannertest: what users
// rely on a plan to say. Each deploys with plannertest.View.Deploy, changes
// the files, the records or the live objects, and plans.

var (
	webDeployment = ref("apps", "v1", "Deployment", "shop", "web")
	webConfig     = ref("", "v1", "ConfigMap", "shop", "web-config")
	webExtra      = ref("", "v1", "ConfigMap", "shop", "web-extra")
)

// observes are the two ways a plan observes unchanged releases: each
// decision holds for both.
var observes = []struct {
	name    string
	observe planner.Observe
}{{"metadata", planner.ObserveMetadata}, {"content", planner.ObserveContent}}

func TestMemUnchangedIsProvenFromFingerprintWhateverTheObservation(t *testing.T) {
	for _, o := range observes {
		t.Run(o.name, func(t *testing.T) {
			m := newMem(t, webStack(t, `{ message = "a" }`))
			m.deploy()
			var stats planner.Stats
			rc := change(t, m.mustPlan(&stats, o.observe), "release.web")
			if rc.Action != plan.ActionNoOp || stats.Renders.Load() != 0 || stats.DryRuns.Load() != 0 {
				t.Fatalf("%s with stats %s; want a no-op without render or dry run", rc.Action, stats.String())
			}
			// What a saved plan's verification compares.
			if len(rc.Observed.Objects) != 2 {
				t.Fatalf("observed %d objects, want 2", len(rc.Observed.Objects))
			}
			want := plan.ObservedApplied
			if o.observe == planner.ObserveContent {
				want = plan.ObservedShape
			}
			for _, ob := range rc.Observed.Objects {
				if ob.Kind != want || ob.Hash == "" || ob.ResourceVersion == "" {
					t.Errorf("%s observed as %s %q at %q, want a %s hash and its resourceVersion", ob.Ref, ob.Kind, ob.Hash, ob.ResourceVersion, want)
				}
			}
		})
	}
}

func TestMemChangedValuesAreRenderedAndUpgraded(t *testing.T) {
	m := newMem(t, webStack(t, `{ message = "a" }`))
	m.deploy()
	m.rewrite(webStack(t, `{ message = "b" }`))
	var stats planner.Stats
	rc := change(t, m.mustPlan(&stats, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionUpgrade {
		t.Fatalf("action %s, want upgrade", rc.Action)
	}
	if got := reasonKinds(rc); got != "values" {
		t.Errorf("reasons %q, want values", got)
	}
	if got, want := objectActions(rc), "ConfigMap/web-config:update Deployment/web:no-op"; got != want {
		t.Errorf("objects %s, want %s", got, want)
	}
	if stats.Renders.Load() == 0 || !strings.Contains(stats.String(), "inputs-changed:1") {
		t.Errorf("stats %s: want it rendered because its inputs changed", stats.String())
	}
	if len(rc.Values.Changes) != 1 || rc.Values.Changes[0].Path != "message" {
		t.Errorf("value changes %+v, want message", rc.Values.Changes)
	}
}

func TestMemRefreshFullRendersAndFindsNoChange(t *testing.T) {
	m := newMem(t, webStack(t, `{ message = "a" }`))
	m.deploy()
	m.in = func(in *planner.Input) { in.Refresh = planner.RefreshFull }
	var stats planner.Stats
	rc := change(t, m.mustPlan(&stats, planner.ObserveContent), "release.web")
	if rc.Action != plan.ActionNoOp {
		t.Fatalf("action %s (reasons %s, objects %s), want no-op", rc.Action, reasonKinds(rc), objectActions(rc))
	}
	if stats.Renders.Load() == 0 || stats.Unchanged.Load() != 0 || !strings.Contains(stats.String(), "refresh-full:1") {
		t.Errorf("stats %s: want it rendered (refresh full), not proven from its fingerprint", stats.String())
	}
}

func TestMemDriftOfAFieldConvoySetIsCorrected(t *testing.T) {
	for _, o := range observes {
		t.Run(o.name, func(t *testing.T) {
			m := newMem(t, webStack(t, `{ replicas = 2 }`))
			m.deploy()
			if err := m.v.Edit(context.Background(), webDeployment, setReplicas(5)); err != nil {
				t.Fatal(err)
			}
			var stats planner.Stats
			rc := change(t, m.mustPlan(&stats, o.observe), "release.web")
			if rc.Action != plan.ActionUpgrade || reasonKinds(rc) != "drift" {
				t.Fatalf("%s (reasons %q), want an upgrade for drift", rc.Action, reasonKinds(rc))
			}
			if !strings.Contains(stats.String(), "live-objects-changed:1") {
				t.Errorf("stats %s: want it planned in full because its live objects changed", stats.String())
			}
			if len(rc.Drift) != 1 || rc.Drift[0].Ref.Name != "web" || !rc.Drift[0].Corrected {
				t.Fatalf("drift %+v, want the Deployment, corrected", rc.Drift)
			}
			d := rc.Drift[0].Diff
			if d == nil || len(d.Changes) != 1 || d.Changes[0].Path != "spec.replicas" {
				t.Fatalf("drift diff %+v, want spec.replicas", d)
			}
			if got, want := objectActions(rc), "ConfigMap/web-config:no-op Deployment/web:update"; got != want {
				t.Errorf("objects %s, want %s", got, want)
			}
		})
	}
}

func TestMemFieldsOnlyOthersSetAreNotDrift(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	if err := m.v.Edit(context.Background(), webDeployment, func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		a["deployment.kubernetes.io/revision"] = "3"
		u.SetAnnotations(a)
	}); err != nil {
		t.Fatal(err)
	}
	var stats planner.Stats
	rc := change(t, m.mustPlan(&stats, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionNoOp || len(rc.Drift) != 0 || stats.Unchanged.Load() != 1 {
		t.Fatalf("%s, drift %+v, stats %s: want a no-op proven from metadata", rc.Action, rc.Drift, stats.String())
	}
}

func TestMemDeletedObjectIsRecreated(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	if err := m.v.Delete(context.Background(), webConfig); err != nil {
		t.Fatal(err)
	}
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionUpgrade {
		t.Fatalf("action %s, want upgrade", rc.Action)
	}
	if got, want := objectActions(rc), "ConfigMap/web-config:create Deployment/web:no-op"; got != want {
		t.Errorf("objects %s, want %s", got, want)
	}
	if len(rc.Drift) != 1 || !rc.Drift[0].Missing {
		t.Errorf("drift %+v, want the ConfigMap missing", rc.Drift)
	}
}

func TestMemObjectAddedByTheChartIsCreated(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	m.rewrite(webStack(t, `{ extra = true }`))
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if got, want := objectActions(rc), "ConfigMap/web-config:no-op ConfigMap/web-extra:create Deployment/web:no-op"; got != want {
		t.Errorf("objects %s, want %s", got, want)
	}
}

func TestMemObjectDroppedByTheChartIsDeleted(t *testing.T) {
	m := newMem(t, webStack(t, `{ extra = true }`))
	m.deploy()
	m.rewrite(webStack(t, ``))
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionUpgrade || !strings.Contains(objectActions(rc), "ConfigMap/web-extra:delete") {
		t.Errorf("%s with objects %s, want web-extra deleted", rc.Action, objectActions(rc))
	}
}

func TestMemExistingObjectNotOwnedIsWarnedAbout(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetNamespace("shop")
	cm.SetName("web-config")
	if err := m.v.Put(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionInstall || !strings.Contains(objectActions(rc), "ConfigMap/web-config:update") {
		t.Fatalf("%s with objects %s, want an install updating the existing ConfigMap", rc.Action, objectActions(rc))
	}
	if w := strings.Join(rc.Warnings, "\n"); !strings.Contains(w, "exists and is not owned by release web") {
		t.Errorf("warnings %q, want the ConfigMap named not owned", w)
	}
}

func TestMemImpactOfAnImageChangeIsARollout(t *testing.T) {
	m := newMem(t, webStack(t, `{ replicas = 3 }`))
	m.deploy()
	m.rewrite(webStack(t, `{ replicas = 3, image = "nginx:1.28" }`))
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if rc.Impact == nil || len(rc.Impact.Rollouts) != 1 {
		t.Fatalf("impact %+v, want one rollout", rc.Impact)
	}
	r := rc.Impact.Rollouts[0]
	if r.Ref.Name != "web" || r.Replicas != 3 {
		t.Errorf("rollout %+v, want web's 3 replicas", r)
	}
	if got := strings.Join(r.Causes, ","); !strings.Contains(got, "image") {
		t.Errorf("causes %q, want the image", got)
	}
}

func TestMemImpactOfAConfigChangeIsStaleConfig(t *testing.T) {
	m := newMem(t, webStack(t, `{ message = "a" }`))
	m.deploy()
	m.rewrite(webStack(t, `{ message = "b" }`))
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if rc.Impact == nil || len(rc.Impact.StaleConfig) != 1 {
		t.Fatalf("impact %+v, want the ConfigMap's consumer to run with stale config", rc.Impact)
	}
	s := rc.Impact.StaleConfig[0]
	if s.Ref.Name != "web-config" || len(s.Consumers) != 1 {
		t.Errorf("stale config %+v, want web-config read by web", s)
	}
	if len(rc.Impact.Rollouts) != 0 {
		t.Errorf("rollouts %+v, want none: the pod template is unchanged", rc.Impact.Rollouts)
	}
}

func TestMemNoImpactWithoutChange(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if !rc.Impact.Empty() {
		t.Errorf("impact %+v of a no-op, want none", rc.Impact)
	}
}

// otherStack deploys release "web" of stack "other" in namespace shop
// into m's cluster, optionally written by helm (no stack label).
func otherStack(t *testing.T, m *mem, helm bool) {
	t.Helper()
	o := &mem{t: t, dir: t.TempDir() + "/other", v: m.v, charts: m.charts}
	writeStack(t, o.dir, strings.Replace(webStack(t, ``), `stack "shop"`, `stack "other"`, 1))
	st := o.load()
	req := o.request(st, "release.web")
	if helm {
		delete(req.Labels, release.StackLabel)
		delete(req.Labels, release.AddressLabel)
	}
	if _, err := m.v.Deploy(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

func TestMemAnotherStacksReleaseIsRefused(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	otherStack(t, m, false)
	p, err := m.plan(nil, planner.ObserveMetadata)
	var foreign *plan.ForeignError
	if !errors.As(err, &foreign) || p == nil {
		t.Fatalf("err %v, want the plan with a *plan.ForeignError", err)
	}
	rc := change(t, p, "release.web")
	if rc.Owner != "other" || !rc.Refused() {
		t.Errorf("owner %q refused %v, want owned by other and refused", rc.Owner, rc.Refused())
	}
	if w := strings.Join(rc.Warnings, "\n"); !strings.Contains(w, `owned by stack "other"`) {
		t.Errorf("warnings %q, want the owner named", w)
	}
}

func TestMemAdoptFromStackTakesItOver(t *testing.T) {
	m := newMem(t, strings.Replace(webStack(t, ``), "values", `adopt_from_stack = "other"
  values`, 1))
	otherStack(t, m, false)
	p, err := m.plan(nil, planner.ObserveMetadata)
	if err != nil {
		t.Fatal(err)
	}
	rc := change(t, p, "release.web")
	if rc.Refused() || !rc.Adopt || rc.Action != plan.ActionUpgrade || !strings.Contains(reasonKinds(rc), "adopt") {
		t.Errorf("refused %v adopt %v %s (reasons %q), want an upgrade that adopts", rc.Refused(), rc.Adopt, rc.Action, reasonKinds(rc))
	}
}

func TestMemHelmsReleaseNeedsAdopt(t *testing.T) {
	for _, adopt := range []bool{false, true} {
		t.Run(fmt.Sprint("adopt=", adopt), func(t *testing.T) {
			hcl := webStack(t, ``)
			if adopt {
				hcl = strings.Replace(hcl, "values", "adopt = true\n  values", 1)
			}
			m := newMem(t, hcl)
			otherStack(t, m, true)
			p, err := m.plan(nil, planner.ObserveMetadata)
			rc := change(t, p, "release.web")
			if rc.Takeover == nil || rc.Takeover.Stack != "" {
				t.Fatalf("takeover %+v, want helm's release named", rc.Takeover)
			}
			if rc.Refused() == adopt || (err == nil) != adopt {
				t.Errorf("refused %v (err %v), want refused only without adopt", rc.Refused(), err)
			}
		})
	}
}

func TestMemRemovedReleaseIsUninstalled(t *testing.T) {
	m := newMem(t, webStack(t, ``)+fmt.Sprintf(`
release "api" {
  chart = %q
}
`, webChart(t)))
	m.deploy()
	m.rewrite(webStack(t, ``))
	p := m.mustPlan(nil, planner.ObserveMetadata)
	rc := change(t, p, "removed:shop/api")
	if rc.Action != plan.ActionUninstall || reasonKinds(rc) != "removed" {
		t.Fatalf("%s (reasons %q), want uninstalled as removed", rc.Action, reasonKinds(rc))
	}
	if got, want := objectActions(rc), "Deployment/api:delete ConfigMap/api-config:delete"; got != want {
		t.Errorf("objects %s, want %s", got, want)
	}
	// What apply checks of it, and nothing rendered to apply.
	if rc.Observed.LastRevision != 1 || rc.Saved != nil {
		t.Errorf("observed revision %d, saved %v: want revision 1 observed, nothing saved to apply", rc.Observed.LastRevision, rc.Saved)
	}
	if change(t, p, "release.web").Action != plan.ActionNoOp {
		t.Errorf("web: want no-op")
	}
}

// Two namespaces' Stacks whose artifacts name one stack are two stacks
// (their identities are scoped to their namespaces): a release team-a's
// Stack wrote is not team-b's to uninstall as removed, though its stack
// label is the same.
func TestMemRemovedReleaseOfAnotherNamespacesStackIsLeftAlone(t *testing.T) {
	m := newMem(t, webStack(t, ``)+fmt.Sprintf(`
release "api" {
  chart = %q
}
`, webChart(t)))
	m.deploy()
	setStatus(t, m, "api", 1, release.StatusDeployed, map[string]string{release.StackNamespaceLabel: "team-a"})
	setStatus(t, m, "web", 1, release.StatusDeployed, map[string]string{release.StackNamespaceLabel: "team-b"})
	m.rewrite(webStack(t, ``))
	m.in = func(in *planner.Input) { in.StackNamespace = "team-b" }
	p := m.mustPlan(nil, planner.ObserveMetadata)
	for _, rc := range p.Releases {
		if rc.Name == "api" {
			t.Errorf("%s %s: team-a's release planned by team-b's Stack", rc.Addr, rc.Action)
		}
	}
	// Its own Stack (whose web it is too) still uninstalls it.
	setStatus(t, m, "web", 1, release.StatusDeployed, map[string]string{release.StackNamespaceLabel: "team-a"})
	m.in = func(in *planner.Input) { in.StackNamespace = "team-a" }
	if rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "removed:shop/api"); rc.Action != plan.ActionUninstall {
		t.Errorf("team-a's Stack: %s, want the removed release uninstalled", rc.Action)
	}
}

func TestMemTargetedPlanUninstallsNothing(t *testing.T) {
	m := newMem(t, webStack(t, ``)+fmt.Sprintf(`
release "api" {
  chart = %q
}
`, webChart(t)))
	m.deploy()
	m.rewrite(webStack(t, ``))
	m.in = func(in *planner.Input) {
		addrs, _ := in.Stack.ResolveTargets([]string{"release.web"})
		in.Targets = addrs
	}
	p := m.mustPlan(nil, planner.ObserveMetadata)
	if got := actions(p); got != "release.web:no-op" {
		t.Errorf("actions %s, want only web, unchanged", got)
	}
}

func TestMemAnotherStacksUndeclaredReleaseIsLeftAlone(t *testing.T) {
	m := newMem(t, strings.Replace(webStack(t, ``), `release "web"`, `release "site"`, 1))
	otherStack(t, m, false)
	p := m.mustPlan(nil, planner.ObserveMetadata)
	if got := actions(p); got != "release.site:install" {
		t.Errorf("actions %s, want site installed and other's web not uninstalled", got)
	}
}

func TestMemMovedReleaseKeepsItsRecords(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	m.rewrite(strings.Replace(webStack(t, ``), `release "web" {`, `release "site" {
  name = "web"`, 1) + `
moved {
  from = release.web
  to   = release.site
}
`)
	p := m.mustPlan(nil, planner.ObserveMetadata)
	if got := actions(p); got != "release.site:no-op" {
		t.Fatalf("actions %s, want the moved release unchanged and nothing uninstalled", got)
	}
	if rc := change(t, p, "release.site"); rc.MovedFrom == nil || rc.MovedFrom.String() != "release.web" {
		t.Errorf("moved from %v, want release.web", rc.MovedFrom)
	}
}

func TestMemWithoutMovedARenamedBlockIsReinstalled(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	m.rewrite(strings.Replace(webStack(t, ``), `release "web" {`, `release "site" {
  name = "web"`, 1))
	p := m.mustPlan(nil, planner.ObserveMetadata)
	// Same Helm name, same stack: the records are the release's, whatever
	// the block is called.
	if got := actions(p); got != "release.site:no-op" {
		t.Errorf("actions %s", got)
	}
}

func TestMemRemovedBlockWithoutDestroyForgets(t *testing.T) {
	m := newMem(t, webStack(t, ``)+fmt.Sprintf(`
release "api" {
  chart = %q
}
`, webChart(t)))
	m.deploy()
	m.rewrite(webStack(t, ``) + `
removed {
  from    = release.api
  destroy = false
}
`)
	p := m.mustPlan(nil, planner.ObserveMetadata)
	rc := change(t, p, "removed:shop/api")
	if rc.Action != plan.ActionForget {
		t.Errorf("action %s, want forget: its records let go, its objects kept", rc.Action)
	}
	if len(rc.Objects) != 0 {
		t.Errorf("objects %s, want none touched", objectActions(rc))
	}
}

func TestMemRenameIsPlannedFromTheOldRecords(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	m.rewrite(strings.Replace(webStack(t, ``), `release "web" {`, `release "site" {`, 1) + `
moved {
  from = release.web
  to   = release.site
}
`)
	p := m.mustPlan(nil, planner.ObserveMetadata)
	rc := change(t, p, "release.site")
	if rc.Rename == nil || rc.Action != plan.ActionUpgrade || !strings.Contains(reasonKinds(rc), "rename") {
		t.Fatalf("%s rename %+v (reasons %q), want an upgrade renaming web", rc.Action, rc.Rename, reasonKinds(rc))
	}
}

// setStatus rewrites the status (and labels) of a revision's record.
func setStatus(t *testing.T, m *mem, name string, revision int, status release.Status, labels map[string]string) {
	t.Helper()
	store := m.v.Records.Storage("shop")
	r, err := store.Get(context.Background(), name, revision)
	if err != nil {
		t.Fatal(err)
	}
	r.Info.Status = status
	for k, v := range labels {
		r.Labels[k] = v
	}
	if err := store.Update(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

// failedUpgrade deploys web, then an upgrade with extra = true that
// failed: revision 2 failed, revision 1 deployed again, web-extra live.
func failedUpgrade(t *testing.T) *mem {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	m.rewrite(webStack(t, `{ extra = true }`))
	m.deploy()
	setStatus(t, m, "web", 2, release.StatusFailed, nil)
	setStatus(t, m, "web", 1, release.StatusDeployed, nil)
	m.rewrite(webStack(t, ``))
	return m
}

func TestMemFailedRevisionsLeftoversAreDeleted(t *testing.T) {
	m := failedUpgrade(t)
	var stats planner.Stats
	rc := change(t, m.mustPlan(&stats, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionUpgrade {
		t.Fatalf("action %s, want upgrade", rc.Action)
	}
	if !strings.Contains(reasonKinds(rc), "last-revision") || !strings.Contains(reasonKinds(rc), "leftover") {
		t.Errorf("reasons %q, want the failed newest revision and its leftover", reasonKinds(rc))
	}
	if !strings.Contains(objectActions(rc), "ConfigMap/web-extra:delete") {
		t.Errorf("objects %s, want web-extra deleted", objectActions(rc))
	}
	if !strings.Contains(stats.String(), "newest-not-deployed:1") {
		t.Errorf("stats %s: want it planned in full as its newest revision is not deployed", stats.String())
	}
}

func TestMemFailedRevisionWithoutLeftoversIsUpgraded(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	m.rewrite(webStack(t, `{ message = "b" }`))
	m.deploy()
	setStatus(t, m, "web", 2, release.StatusFailed, nil)
	setStatus(t, m, "web", 1, release.StatusDeployed, nil)
	m.rewrite(webStack(t, ``))
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionUpgrade || strings.Contains(reasonKinds(rc), "leftover") {
		t.Errorf("%s (reasons %q), want an upgrade (the newest revision failed), no leftover", rc.Action, reasonKinds(rc))
	}
}

// pendingUpgrade deploys web and leaves revision 2 pending-upgrade, as
// a run with id run-1 left it.
func pendingUpgrade(t *testing.T) *mem {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	m.rewrite(webStack(t, `{ message = "b" }`))
	m.deploy()
	setStatus(t, m, "web", 2, release.StatusPendingUpgrade, map[string]string{release.RunLabel: "run-1"})
	setStatus(t, m, "web", 1, release.StatusDeployed, nil)
	return m
}

func TestMemPendingRecordIsAnErrorUnlessItsRunIsGone(t *testing.T) {
	m := pendingUpgrade(t)
	if _, err := m.plan(nil, planner.ObserveMetadata); err == nil || !strings.Contains(err.Error(), "pending") {
		t.Fatalf("err %v, want the pending record named", err)
	}
	m.in = func(in *planner.Input) { in.Interrupted = func(run string) bool { return run == "run-2" } }
	if _, err := m.plan(nil, planner.ObserveMetadata); err == nil {
		t.Fatal("planned a release another run (still there) holds pending")
	}
}

func TestMemInterruptedRunsRecordIsPlannedAsFailed(t *testing.T) {
	m := pendingUpgrade(t)
	m.in = func(in *planner.Input) { in.Interrupted = func(run string) bool { return run == "run-1" } }
	var stats planner.Stats
	rc := change(t, m.mustPlan(&stats, planner.ObserveMetadata), "release.web")
	i := rc.Interrupted
	if i == nil || i.RunID != "run-1" || i.Revision != 2 || i.Status != string(release.StatusPendingUpgrade) {
		t.Fatalf("interrupted %+v, want run-1's revision 2 pending-upgrade", i)
	}
	if rc.Action != plan.ActionUpgrade {
		t.Errorf("action %s, want upgrade", rc.Action)
	}
	if stats.Unchanged.Load() != 0 {
		t.Errorf("stats %s: an interrupted release is never proven unchanged", stats.String())
	}
}

func TestMemDestroyUninstallsEveryRelease(t *testing.T) {
	m := newMem(t, webStack(t, ``)+fmt.Sprintf(`
release "api" {
  chart      = %q
  depends_on = [release.web]
}
`, webChart(t)))
	m.deploy()
	m.in = func(in *planner.Input) { in.Destroy = true }
	p := m.mustPlan(nil, planner.ObserveMetadata)
	for _, rc := range p.Releases {
		if rc.Action != plan.ActionUninstall || reasonKinds(rc) != "destroy" {
			t.Errorf("%s: %s (reasons %q), want uninstall for destroy", rc.Addr, rc.Action, reasonKinds(rc))
		}
		if !strings.Contains(objectActions(rc), "Deployment/"+rc.Name+":delete") {
			t.Errorf("%s: objects %s, want its Deployment deleted", rc.Addr, objectActions(rc))
		}
	}
	if len(p.Releases) != 2 {
		t.Errorf("%d releases, want 2", len(p.Releases))
	}
}

func TestMemDestroyLeavesAnotherStacksReleaseAlone(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	otherStack(t, m, false)
	m.in = func(in *planner.Input) { in.Destroy = true }
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionNoOp || len(rc.Objects) != 0 {
		t.Errorf("%s with objects %s, want a no-op: destroy never uninstalls another stack's release", rc.Action, objectActions(rc))
	}
	if w := strings.Join(rc.Warnings, "\n"); !strings.Contains(w, `belongs to stack "other": destroy leaves it alone`) {
		t.Errorf("warnings %q, want the owner named", w)
	}
}

func TestMemRecordWithoutFingerprintIsRelabelled(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	store := m.v.Records.Storage("shop")
	r, err := store.Get(context.Background(), "web", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := r.Labels[release.FingerprintLabel]
	delete(r.Labels, release.FingerprintLabel)
	if err := store.Update(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	var stats planner.Stats
	rc := change(t, m.mustPlan(&stats, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionNoOp || !strings.Contains(stats.String(), "no-fingerprint:1") {
		t.Fatalf("%s, stats %s: want a no-op planned in full", rc.Action, stats.String())
	}
	if rc.Relabel[release.FingerprintLabel] != want {
		t.Errorf("relabel %v, want the fingerprint %s back", rc.Relabel, want)
	}
}

func TestMemChartVersionChangeIsAReason(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	rec, err := m.v.Records.Storage("shop").Get(context.Background(), "web", 1)
	if err != nil {
		t.Fatal(err)
	}
	rec.Chart.Metadata.Version = "0.9.0"
	rec.Labels[release.FingerprintLabel] = "older"
	if err := m.v.Records.Storage("shop").Update(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionUpgrade || reasonKinds(rc) != "chart" {
		t.Errorf("%s (reasons %q), want an upgrade for the chart", rc.Action, reasonKinds(rc))
	}
}

// reading is a stack whose api reads web's ConfigMap (msg: web's message)
// or, literal, has the value that reads: deploy can only deploy values
// known now, and a release's fingerprint holds its values, not where
// they came from.
func reading(t *testing.T, msg string, literal bool) string {
	value := `release.web.resources["v1/ConfigMap/web-config"].data.message`
	if literal {
		value = fmt.Sprintf("%q", msg)
	}
	return webStack(t, fmt.Sprintf(`{ message = %q }`, msg)) + fmt.Sprintf(`
release "api" {
  chart      = %q
  depends_on = [release.web]
  values     = [{ message = %s }]
}
`, webChart(t), value)
}

func TestMemDependentReadsOutputsOfAnUnchangedRelease(t *testing.T) {
	m := newMem(t, reading(t, "a", true))
	m.deploy()
	m.rewrite(reading(t, "a", false))
	var stats planner.Stats
	p := m.mustPlan(&stats, planner.ObserveMetadata)
	if got := actions(p); got != "release.web:no-op release.api:no-op" {
		t.Fatalf("actions %s, want both unchanged (api's values known from web's live ConfigMap)", got)
	}
	if change(t, p, "release.api").KnownAfterApply || stats.Unchanged.Load() != 2 {
		t.Errorf("stats %s: want api planned now, proven unchanged with the value it reads", stats.String())
	}
}

func TestMemDependentOfAChangingReleaseIsKnownAfterApply(t *testing.T) {
	m := newMem(t, reading(t, "a", true))
	m.deploy()
	m.rewrite(reading(t, "b", false))
	p := m.mustPlan(nil, planner.ObserveMetadata)
	if rc := change(t, p, "release.api"); !rc.KnownAfterApply {
		t.Errorf("api %s, want known after apply: it reads what web's upgrade changes", rc.Action)
	}
}

func TestMemFullRefreshSkipsDryRunsOnlyWithoutAdmission(t *testing.T) {
	for _, tc := range []struct {
		admission []string
		skipped   bool
	}{
		{nil, true},                // nothing could mutate or refuse the objects
		{[]string{"batch"}, true},  // webhooks of a group the release has no object of
		{[]string{"apps"}, false},  // one of its objects' groups: every object is dry-run
		{[]string{"*"}, false},     // every group
		{[]string{"", "x"}, false}, // the core group
	} {
		t.Run(fmt.Sprint(tc.admission), func(t *testing.T) {
			v, err := plannertest.New(plannertest.Options{Admission: tc.admission})
			if err != nil {
				t.Fatal(err)
			}
			m := newMem(t, webStack(t, ``))
			m.v = v
			m.deploy()
			m.in = func(in *planner.Input) { in.Refresh = planner.RefreshFull }
			var stats planner.Stats
			rc := change(t, m.mustPlan(&stats, planner.ObserveContent), "release.web")
			if rc.Action != plan.ActionNoOp {
				t.Fatalf("action %s, want no-op", rc.Action)
			}
			skipped, ran := stats.DryRunsSkipped.Load(), stats.DryRuns.Load()
			if tc.skipped && (skipped != 2 || ran != 0) || !tc.skipped && (skipped != 0 || ran != 2) {
				t.Errorf("stats %s, want both dry runs %s", stats.String(), map[bool]string{true: "skipped", false: "run"}[tc.skipped])
			}
		})
	}
}

func TestMemIgnoredFieldIsNeitherDriftNorChange(t *testing.T) {
	m := newMem(t, strings.Replace(webStack(t, `{ replicas = 2 }`), "values", `ignore_changes = [{ kind = "Deployment", paths = ["/spec/replicas"] }]
  values`, 1))
	m.deploy()
	if err := m.v.Edit(context.Background(), webDeployment, setReplicas(7)); err != nil {
		t.Fatal(err)
	}
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionNoOp || len(rc.Drift) != 0 {
		t.Fatalf("%s, drift %+v: want a no-op, the autoscaler's replicas theirs", rc.Action, rc.Drift)
	}
	// The applied state moved (replicas changed hands): the record is
	// relabelled, so the next plan proves it unchanged again.
	if rc.Relabel[release.AppliedLabel] == "" {
		t.Errorf("relabel %v, want the new applied state", rc.Relabel)
	}
}

func TestMemLetGoReleaseIsTakenOverWithoutAdopt(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	otherStack(t, m, true)
	setStatus(t, m, "web", 1, release.StatusDeployed, map[string]string{release.LetGoLabel: "other"})
	p, err := m.plan(nil, planner.ObserveMetadata)
	if err != nil {
		t.Fatal(err)
	}
	rc := change(t, p, "release.web")
	if rc.Takeover == nil || !rc.Takeover.LetGo || !rc.Takeover.Allowed || rc.Refused() {
		t.Errorf("takeover %+v, refused %v: want let go by other, taken over", rc.Takeover, rc.Refused())
	}
}

func TestMemStackOfAnotherNamespaceIsNeverTakenOver(t *testing.T) {
	m := newMem(t, strings.Replace(webStack(t, ``), "values", "adopt = true\n  values", 1))
	m.deploy()
	setStatus(t, m, "web", 1, release.StatusDeployed, map[string]string{release.StackNamespaceLabel: "team-a"})
	m.in = func(in *planner.Input) { in.StackNamespace = "team-b" }
	p, err := m.plan(nil, planner.ObserveMetadata)
	var foreign *plan.ForeignError
	if !errors.As(err, &foreign) {
		t.Fatalf("err %v, want a *plan.ForeignError", err)
	}
	if rc := change(t, p, "release.web"); rc.Takeover == nil || rc.Takeover.Refusal == "" {
		t.Errorf("takeover %+v, want refused whatever adopt says", rc.Takeover)
	}
}

func TestMemNothingDeployedIsUpgradedFromTheNewestRevision(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	setStatus(t, m, "web", 1, release.StatusFailed, nil)
	var stats planner.Stats
	rc := change(t, m.mustPlan(&stats, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionUpgrade || !strings.Contains(reasonKinds(rc), "last-revision") {
		t.Errorf("%s (reasons %q), want an upgrade saying the newest revision failed", rc.Action, reasonKinds(rc))
	}
	if stats.Unchanged.Load() != 0 {
		t.Errorf("stats %s: a failed release is never proven unchanged", stats.String())
	}
}

func TestMemUninstalledReleaseIsInstalledAgain(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	setStatus(t, m, "web", 1, release.StatusUninstalled, nil)
	for _, r := range []kube.Ref{webDeployment, webConfig} {
		if err := m.v.Delete(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionInstall || reasonKinds(rc) != "new" {
		t.Errorf("%s (reasons %q), want installed again", rc.Action, reasonKinds(rc))
	}
}

// shopOf is n releases r0..r(n-1) of the web chart in namespace shop.
func shopOf(t *testing.T, n int, message string) string {
	hcl := `
stack "shop" {
  default_namespace = "shop"
}
`
	for i := range n {
		hcl += fmt.Sprintf(`
release "r%d" {
  chart  = %q
  values = [{ message = %q }]
}
`, i, webChart(t), message)
	}
	return hcl
}

func TestMemDeployedRecordsAreReadByListWhenMostAreNeeded(t *testing.T) {
	m := newMem(t, shopOf(t, 3, "a"))
	m.deploy()
	m.rewrite(shopOf(t, 3, "b"))
	var stats planner.Stats
	p := m.mustPlan(&stats, planner.ObserveMetadata)
	if got := p.Summary().String(); got != "Plan: 0 to install, 3 to upgrade, 0 to uninstall, 0 unchanged." {
		t.Fatalf("summary %q", got)
	}
	// One list of the records' metadata, one of the deployed records.
	if stats.RecordLists.Load() != 2 || stats.RecordReads.Load() != 0 {
		t.Errorf("stats %s: want the 3 deployed records read with one list", stats.String())
	}
}

func TestMemOneNeededRecordIsReadAlone(t *testing.T) {
	m := newMem(t, shopOf(t, 3, "a"))
	m.deploy()
	m.rewrite(strings.Replace(shopOf(t, 3, "a"), `release "r0" {
  chart  = "`+webChart(t)+`"
  values = [{ message = "a" }]`, `release "r0" {
  chart  = "`+webChart(t)+`"
  values = [{ message = "b" }]`, 1))
	var stats planner.Stats
	p := m.mustPlan(&stats, planner.ObserveMetadata)
	if got := actions(p); got != "release.r0:upgrade release.r1:no-op release.r2:no-op" {
		t.Fatalf("actions %s", got)
	}
	if stats.RecordLists.Load() != 1 || stats.RecordReads.Load() != 1 {
		t.Errorf("stats %s: want the one deployed record needed read with a GET", stats.String())
	}
}

func TestMemPolicyObjectsSeeTheDeployedObjectsOfUnchangedReleases(t *testing.T) {
	m := newMem(t, webStack(t, `{ replicas = 4 }`))
	m.deploy()
	m.in = func(in *planner.Input) { in.PolicyObjects = true }
	var stats planner.Stats
	rc := change(t, m.mustPlan(&stats, planner.ObserveMetadata), "release.web")
	if rc.Action != plan.ActionNoOp || stats.Renders.Load() != 0 {
		t.Fatalf("%s, stats %s: want a no-op proven without render", rc.Action, stats.String())
	}
	for _, o := range rc.Objects {
		if o.Deployed == nil {
			t.Fatalf("%s: no deployed object for policies", o.Ref)
		}
		if o.Ref.Kind == "Deployment" && fmt.Sprint(o.Deployed["spec"].(map[string]any)["replicas"]) != "4" {
			t.Errorf("deployed %v, want replicas 4", o.Deployed["spec"])
		}
	}
}

func TestMemReplicasChangeIsNotARollout(t *testing.T) {
	m := newMem(t, webStack(t, `{ replicas = 2 }`))
	m.deploy()
	m.rewrite(webStack(t, `{ replicas = 3 }`))
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if !strings.Contains(objectActions(rc), "Deployment/web:update") {
		t.Fatalf("objects %s, want the Deployment updated", objectActions(rc))
	}
	if rc.Impact != nil && len(rc.Impact.Rollouts) != 0 {
		t.Errorf("rollouts %+v: scaling replaces no pod", rc.Impact.Rollouts)
	}
}

func TestMemNewReleaseBesideUnchangedOnes(t *testing.T) {
	m := newMem(t, shopOf(t, 2, "a"))
	m.deploy()
	m.rewrite(shopOf(t, 3, "a"))
	p := m.mustPlan(nil, planner.ObserveMetadata)
	if got := p.Summary().String(); got != "Plan: 1 to install, 0 to upgrade, 0 to uninstall, 2 unchanged." {
		t.Errorf("summary %q", got)
	}
}

func TestMemObjectOwnedByAnotherReleaseIsAConflict(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetNamespace("shop")
	cm.SetName("web-config")
	cm.SetAnnotations(map[string]string{"meta.helm.sh/release-name": "api", "meta.helm.sh/release-namespace": "shop"})
	cm.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "Helm"})
	if err := m.v.Put(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	p, err := m.plan(nil, planner.ObserveMetadata)
	var foreign *plan.ForeignError
	if !errors.As(err, &foreign) {
		t.Fatalf("err %v, want the plan refused", err)
	}
	rc := change(t, p, "release.web")
	if len(rc.Conflicts) != 1 || rc.Conflicts[0].OwnerRelease != "api" {
		t.Errorf("conflicts %+v, want web-config owned by release api", rc.Conflicts)
	}
}

func TestMemUpgradeLeavesIgnoredFieldsAlone(t *testing.T) {
	hcl := func(message string) string {
		return strings.Replace(webStack(t, fmt.Sprintf(`{ message = %q }`, message)), "values", `ignore_changes = [{ kind = "Deployment", paths = ["/spec/replicas"] }]
  values`, 1)
	}
	m := newMem(t, hcl("a"))
	m.deploy()
	if err := m.v.Edit(context.Background(), webDeployment, setReplicas(7)); err != nil {
		t.Fatal(err)
	}
	m.rewrite(hcl("b"))
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
	if got, want := objectActions(rc), "ConfigMap/web-config:update Deployment/web:no-op"; got != want {
		t.Errorf("objects %s, want %s: the upgrade keeps the replicas an autoscaler set", got, want)
		for _, o := range rc.Objects {
			if o.Diff != nil {
				for _, c := range o.Diff.Changes {
					t.Logf("%s %s: %v -> %v", o.Ref.Name, c.Path, c.Before, c.After)
				}
			}
		}
	}
}

// helm rollback copies the labels of the revision it rolls back to, so a
// rollback past a move writes a newest record naming the address the
// release moved from. The move was recorded before (a revision names the
// new address): the plan does not say it moved again, and apply quietly
// puts the new address back on the record.
func TestMemMoveRecordedBeforeARollbackIsNotNotedAgain(t *testing.T) {
	m := newMem(t, webStack(t, ``))
	m.deploy()
	moved := strings.Replace(webStack(t, `{ message = "moved" }`), `release "web" {`, `release "site" {
  name = "web"`, 1) + `
moved {
  from = release.web
  to   = release.site
}
`
	m.rewrite(moved)
	m.deploy() // revision 2, written at release.site
	store := m.v.Records.Storage("shop")
	ctx := context.Background()
	first, err := store.Get(ctx, "web", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := first.Labels[release.AddressLabel]; got != "release.web" {
		t.Fatalf("revision 1 at %q, want release.web", got)
	}
	// helm rollback web 1: revision 3 is revision 1's chart, values,
	// manifest and labels; revision 2 is superseded.
	setStatus(t, m, "web", 2, release.StatusSuperseded, nil)
	first.Version = 3
	first.Info.Status = release.StatusDeployed
	first.Info.Description = "Rollback to 1"
	if err := store.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	m.rewrite(strings.Replace(moved, `{ message = "moved" }`, ``, 1))
	rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.site")
	if rc.MovedFrom != nil {
		t.Errorf("moved from %s again, want no move: revision 2 recorded it", rc.MovedFrom)
	}
	if rc.Action == plan.ActionNoOp && rc.Relabel[release.AddressLabel] != "release.site" {
		t.Errorf("relabel %v, want the record to get its address back", rc.Relabel)
	}

	// A record of a release that never was at its new address still says
	// it moved.
	m2 := newMem(t, webStack(t, ``))
	m2.deploy()
	m2.rewrite(strings.Replace(moved, `{ message = "moved" }`, ``, 1))
	if rc := change(t, m2.mustPlan(nil, planner.ObserveMetadata), "release.site"); rc.MovedFrom == nil {
		t.Errorf("no move noted for a release moved for the first time")
	}
}
