package planner_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The plan counts each release's objects changed outside convoy
// (ReleaseChange.Drifted, which the controller's status.plan.drifted
// sums): for a release upgraded only to correct its drift as for one that
// changes anyway, and a saved plan keeps the count.
func TestPlanCountsDriftedObjects(t *testing.T) {
	ns := cluster.Namespace(t)
	e := newEnv(t, twoReleases(appChart(t), ns, "v1"))
	e.deploy(nil)
	// db drifts twice (scaled, its ConfigMap deleted) and changes for no
	// other reason; api drifts once and its values change.
	scale(t, ns, "db", 3)
	if err := cluster.Client().CoreV1().ConfigMaps(ns).Delete(context.Background(), "db-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	scale(t, ns, "api", 4)
	writeStack(t, e.dir, twoReleases(appChart(t), ns, "v2"))

	p := e.mustPlan(nil)
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

	path := filepath.Join(t.TempDir(), "plan")
	if err := writePlan(path, p); err != nil {
		t.Fatal(err)
	}
	saved, err := readPlan(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := [2]int{saved.Release("release.db").Drifted, saved.Release("release.api").Drifted}; got != [2]int{2, 1} {
		t.Errorf("saved plan: drifted %v, want [2 1]", got)
	}
}
