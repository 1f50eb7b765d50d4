package main

import (
	"bytes"
	"errors"
	"regexp"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/dag"
)

// The results table says what each release's record says, except for a
// failed upgrade its own atomic rolled back: its record is the rollback's,
// deployed, and the release failed. Releases a step left no record of show
// no revision.
func TestResultsTableSaysRolledBack(t *testing.T) {
	outcome := func(name string, action plan.Action, result run.Result, step dag.Status, revision int, status string) run.ReleaseOutcome {
		return run.ReleaseOutcome{Addr: "release." + name, Name: name, Namespace: "shop", Action: action, Result: result, Step: step, Revision: revision, Status: status}
	}
	api := outcome("api", plan.ActionUpgrade, run.ResultRolledBack, dag.Failed, 3, "deployed")
	api.Err = errors.New("upgrade of api failed and was rolled back to revision 1 as revision 3 (atomic): quota")
	db := outcome("db", plan.ActionUpgrade, run.ResultDeployed, dag.Failed, 2, "failed")
	db.Err = errors.New("upgrade of db failed")
	cache := outcome("cache", plan.ActionUpgrade, run.ResultSkipped, dag.Skipped, 4, "deployed")
	cache.Reason = "release.db failed"
	worker := outcome("worker", plan.ActionNoOp, run.ResultUnchanged, dag.Succeeded, 3, "deployed")
	worker.Reason = "outputs of release.db unchanged"
	queue := outcome("queue", plan.ActionInstall, run.ResultFailed, dag.Cancelled, 0, "")
	queue.Err = errors.New("context canceled")
	var b bytes.Buffer
	writeResults(&b, []run.ReleaseOutcome{
		api,
		outcome("web", plan.ActionUpgrade, run.ResultDeployed, dag.Succeeded, 2, "deployed"),
		db,
		cache,
		worker,
		outcome("mail", plan.ActionNoOp, run.ResultUnchanged, dag.Succeeded, 5, "deployed"),
		outcome("old", plan.ActionUninstall, run.ResultUninstalled, dag.Succeeded, 2, "uninstalled"),
		queue,
	}, nil)
	for _, want := range []string{
		`(?m)^api\s+shop\s+upgrade\s+3\s+rolled back\s`,
		`(?m)^web\s+shop\s+upgrade\s+2\s+deployed\s`,
		`(?m)^db\s+shop\s+upgrade\s+2\s+failed\s`,
		`(?m)^cache\s+shop\s+upgrade\s+-\s+skipped \(release\.db failed\)\s`,
		`(?m)^worker\s+shop\s+no-op\s+3\s+unchanged \(outputs of release\.db unchanged\)\s`,
		`(?m)^mail\s+shop\s+no-op\s+-\s+unchanged\s`,
		`(?m)^old\s+shop\s+uninstall\s+-\s+uninstalled\s`,
		`(?m)^queue\s+shop\s+install\s+-\s+cancelled\s`,
		`(?m)^release\.api \(shop/api\): upgrade of api failed`,
		`(?m)^release\.queue \(shop/queue\): context canceled`,
	} {
		if !regexp.MustCompile(want).MatchString(b.String()) {
			t.Errorf("results lack %s:\n%s", want, b.String())
		}
	}
}
