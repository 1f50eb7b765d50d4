package stack

import (
	"errors"
	"reflect"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/dag"
)

// The Stack's status.releases and its error are written from the run's
// release outcomes: an uninstalled release leaves the list, one whose step
// did not succeed shows how it ended, and what an atomic run undid is said.
func TestStatusOfReleaseOutcomes(t *testing.T) {
	res := &run.Applied{Releases: []run.ReleaseOutcome{
		{Addr: "release.db", Name: "db", Namespace: "shop", Cluster: "eu", Action: plan.ActionUpgrade, Result: run.ResultDeployed, Step: dag.Succeeded, Revision: 3, Status: "deployed", PreviousDeployed: 2, Restored: true},
		{Addr: "release.api", Name: "api", Namespace: "shop", Action: plan.ActionUpgrade, Result: run.ResultRolledBack, Step: dag.Failed, Err: errors.New("quota"), Revision: 4, Status: "deployed"},
		{Addr: "release.web", Name: "web", Namespace: "shop", Action: plan.ActionInstall, Result: run.ResultSkipped, Reason: "release.api failed", Step: dag.Skipped},
		{Addr: "release.old", Name: "old", Namespace: "shop", Action: plan.ActionUninstall, Result: run.ResultUninstalled, Step: dag.Succeeded, Revision: 2, Status: "uninstalled"},
		{Addr: "release.new", Name: "new", Namespace: "shop", Action: plan.ActionInstall, Result: run.ResultDeployed, Step: dag.Succeeded, Revision: 1, Status: "deployed", Restored: true},
		{Addr: "release.mail", Name: "mail", Namespace: "shop", Action: plan.ActionNoOp, Result: run.ResultUnchanged, Step: dag.Succeeded, Revision: 5, Status: "deployed"},
	}}
	want := []v1alpha1.ReleaseStatus{
		{Address: "release.db", Name: "db", Namespace: "shop", Cluster: "eu", Revision: 3, Status: "deployed"},
		{Address: "release.api", Name: "api", Namespace: "shop", Revision: 4, Status: "failed"},
		{Address: "release.web", Name: "web", Namespace: "shop", Status: "skipped"},
		{Address: "release.new", Name: "new", Namespace: "shop", Revision: 1, Status: "deployed"},
		{Address: "release.mail", Name: "mail", Namespace: "shop", Revision: 5, Status: "deployed"},
	}
	if got := releasesOfResults(res); !reflect.DeepEqual(got, want) {
		t.Errorf("status.releases\n%+v\nwant\n%+v", got, want)
	}
	const errs = "release.api: quota\n" +
		"release.db: restored (atomic) as revision 3\n" +
		"release.new: restored (atomic): uninstalled"
	if got := stepErrors(res).Error(); got != errs {
		t.Errorf("error:\n%s\nwant:\n%s", got, errs)
	}
}
