package planner_test

import (
	"context"
	"slices"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
)

// The plan counts each release's objects changed outside convoy
// (ReleaseChange.Drifted, which the controller's status.plan.drifted
// sums): for a release upgraded only to correct its drift as for one that
// changes anyway, and a saved plan keeps the count.
func TestPlanCountsDriftedObjects(t *testing.T) {
	ctx := context.Background()
	m := newMem(t, twoReleases(appChart(t), "shop", "v1"))
	m.deploy()
	// db drifts twice (scaled, its ConfigMap deleted) and changes for no
	// other reason; api drifts once and its values change.
	if err := m.v.EditAs(ctx, "kubectl", ref("apps", "v1", "Deployment", "shop", "db"), setReplicas(3)); err != nil {
		t.Fatal(err)
	}
	if err := m.v.Delete(ctx, ref("", "v1", "ConfigMap", "shop", "db-config")); err != nil {
		t.Fatal(err)
	}
	if err := m.v.EditAs(ctx, "kubectl", ref("apps", "v1", "Deployment", "shop", "api"), setReplicas(4)); err != nil {
		t.Fatal(err)
	}
	m.rewrite(twoReleases(appChart(t), "shop", "v2"))

	p := m.mustPlan(nil, planner.ObserveContent)
	hasDrift := func(rc *plan.ReleaseChange) bool {
		return slices.ContainsFunc(rc.Reasons, func(r plan.Reason) bool { return r.Kind == plan.ReasonDrift })
	}
	db, api := p.Release("release.db"), p.Release("release.api")
	if db.Action != plan.ActionUpgrade || db.Drifted != 2 || !hasDrift(db) {
		t.Errorf("db: %s, drifted %d, reasons %v, drift %+v: want an upgrade for 2 drifted objects", db.Action, db.Drifted, db.Reasons, db.Drift)
	}
	if api.Action != plan.ActionUpgrade || api.Drifted != 1 || len(api.Drift) != 1 || hasDrift(api) {
		t.Errorf("api: %s, drifted %d, reasons %v, drift %+v: want an upgrade for its values, 1 drifted object", api.Action, api.Drifted, api.Reasons, api.Drift)
	}

	s := saved(t, p)
	if got := [2]int{s.Release("release.db").Drifted, s.Release("release.api").Drifted}; got != [2]int{2, 1} {
		t.Errorf("saved plan: drifted %v, want [2 1]", got)
	}
}
