package main

import (
	"bytes"
	"errors"
	"regexp"
	"testing"

	"github.com/convoy-sh/convoy/internal/apply"
	"github.com/convoy-sh/convoy/internal/dag"
	"github.com/convoy-sh/convoy/internal/release"
)

// The results table says what each release's record says, except for a
// failed upgrade its own atomic rolled back: its record is the rollback's,
// deployed, and the release failed.
func TestResultsTableSaysRolledBack(t *testing.T) {
	deploy := func(name string, status dag.Status, err error, rec *release.Release) *apply.Result {
		return &apply.Result{
			Outcome: apply.Outcome{ID: name, Status: status, Err: err},
			Step:    &apply.Step{ID: name, Name: name, Namespace: "shop", Kind: apply.StepDeploy},
			Release: rec,
		}
	}
	var b bytes.Buffer
	writeResults(&b, []*apply.Result{
		deploy("api", dag.Failed, errors.New("upgrade of api failed and was rolled back to revision 1 as revision 3 (atomic): quota"),
			&release.Release{Version: 3, Info: &release.Info{Status: release.StatusDeployed, RollbackRevision: 1}}),
		deploy("web", dag.Succeeded, nil, &release.Release{Version: 2, Info: &release.Info{Status: release.StatusDeployed}}),
		deploy("db", dag.Failed, errors.New("upgrade of db failed"), &release.Release{Version: 2, Info: &release.Info{Status: release.StatusFailed}}),
	}, nil)
	for _, want := range []string{
		`(?m)^api\s+shop\s+upgrade\s+3\s+rolled back\s`,
		`(?m)^web\s+shop\s+upgrade\s+2\s+deployed\s`,
		`(?m)^db\s+shop\s+upgrade\s+2\s+failed\s`,
	} {
		if !regexp.MustCompile(want).MatchString(b.String()) {
			t.Errorf("results lack %s:\n%s", want, b.String())
		}
	}
}
