package run

import (
	"errors"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/run/apply"
	"github.com/convoy-sh/convoy/internal/stack/addrs"
	"github.com/convoy-sh/convoy/internal/stack/dag"
)

// Each way a step can end is derived once into the release's outcome: the
// action in the plan's words, how the run left it, and the record it is
// at (what the CLI's table and the controller's status both print).
func TestReleaseOutcomes(t *testing.T) {
	const ns = "shop"
	addr := func(name string) plan.ReleaseAddr {
		return plan.InstanceAddr(addrs.Release{Name: name}.Instance(addrs.NoKey))
	}
	record := func(version int, status release.Status, rollback int) *release.Release {
		return &release.Release{Version: version, Info: &release.Info{Status: status, RollbackRevision: rollback}}
	}
	boom := errors.New("boom")
	type want struct {
		action   plan.Action
		result   Result
		reason   string
		step     dag.Status
		revision int
		status   string
	}
	for _, tc := range []struct {
		name   string
		change plan.ReleaseChange // Addr, Name, Namespace filled in
		kind   apply.StepKind
		result apply.Result // Step filled in
		want   want
	}{{
		name:   "deployed",
		change: plan.ReleaseChange{Action: plan.ActionUpgrade, Cluster: "eu", Observed: plan.Observed{LastRevision: 1, LastStatus: "deployed"}},
		kind:   apply.StepDeploy,
		result: apply.Result{Outcome: apply.Outcome{Status: dag.Succeeded}, Release: record(2, release.StatusDeployed, 0), PreviousDeployed: 1},
		want:   want{plan.ActionUpgrade, ResultDeployed, "", dag.Succeeded, 2, "deployed"},
	}, {
		name:   "failed with a record",
		change: plan.ReleaseChange{Action: plan.ActionUpgrade, Observed: plan.Observed{LastRevision: 1, LastStatus: "deployed"}},
		kind:   apply.StepDeploy,
		result: apply.Result{Outcome: apply.Outcome{Status: dag.Failed, Err: boom}, Release: record(2, release.StatusFailed, 0), PreviousDeployed: 1},
		want:   want{plan.ActionUpgrade, ResultDeployed, "", dag.Failed, 2, "failed"},
	}, {
		name:   "failed before any record",
		change: plan.ReleaseChange{Action: plan.ActionInstall},
		kind:   apply.StepDeploy,
		result: apply.Result{Outcome: apply.Outcome{Status: dag.Failed, Err: boom}},
		want:   want{plan.ActionInstall, ResultFailed, "", dag.Failed, 0, ""},
	}, {
		name:   "rolled back by its own atomic",
		change: plan.ReleaseChange{Action: plan.ActionUpgrade, Observed: plan.Observed{LastRevision: 1, LastStatus: "deployed"}},
		kind:   apply.StepDeploy,
		result: apply.Result{Outcome: apply.Outcome{Status: dag.Failed, Err: boom}, Release: record(3, release.StatusDeployed, 1), PreviousDeployed: 1},
		want:   want{plan.ActionUpgrade, ResultRolledBack, "", dag.Failed, 3, "deployed"},
	}, {
		name:   "skipped",
		change: plan.ReleaseChange{Action: plan.ActionUpgrade, Observed: plan.Observed{LastRevision: 4, LastStatus: "deployed"}},
		kind:   apply.StepDeploy,
		result: apply.Result{Outcome: apply.Outcome{Status: dag.Skipped, Reason: "release.db failed"}},
		want:   want{plan.ActionUpgrade, ResultSkipped, "release.db failed", dag.Skipped, 4, "deployed"},
	}, {
		name:   "uninstalled",
		change: plan.ReleaseChange{Action: plan.ActionUninstall, Observed: plan.Observed{LastRevision: 2, LastStatus: "deployed"}},
		kind:   apply.StepUninstall,
		result: apply.Result{Outcome: apply.Outcome{Status: dag.Succeeded}, Release: record(2, release.StatusUninstalled, 0)},
		want:   want{plan.ActionUninstall, ResultUninstalled, "", dag.Succeeded, 2, "uninstalled"},
	}, {
		name:   "uninstall failed",
		change: plan.ReleaseChange{Action: plan.ActionUninstall, Observed: plan.Observed{LastRevision: 2, LastStatus: "deployed"}},
		kind:   apply.StepUninstall,
		result: apply.Result{Outcome: apply.Outcome{Status: dag.Failed, Err: boom}},
		want:   want{plan.ActionUninstall, ResultFailed, "", dag.Failed, 2, "deployed"},
	}, {
		name:   "unchanged in the plan",
		change: plan.ReleaseChange{Action: plan.ActionNoOp, Observed: plan.Observed{LastRevision: 5, LastStatus: "deployed"}},
		kind:   apply.StepNoOp,
		result: apply.Result{Outcome: apply.Outcome{Status: dag.Succeeded}},
		want:   want{plan.ActionNoOp, ResultUnchanged, "", dag.Succeeded, 5, "deployed"},
	}, {
		name:   "forgotten",
		change: plan.ReleaseChange{Action: plan.ActionForget, Observed: plan.Observed{LastRevision: 5, LastStatus: "deployed"}},
		kind:   apply.StepNoOp,
		result: apply.Result{Outcome: apply.Outcome{Status: dag.Succeeded}},
		want:   want{plan.ActionForget, ResultUnchanged, "", dag.Succeeded, 5, "deployed"},
	}, {
		name:   "rendered at apply as deployed",
		change: plan.ReleaseChange{Action: plan.ActionUpgrade, KnownAfterApply: true, Observed: plan.Observed{LastRevision: 3, LastStatus: "deployed"}},
		kind:   apply.StepDeploy,
		result: apply.Result{Outcome: apply.Outcome{Status: dag.Succeeded}, Release: record(3, release.StatusDeployed, 0), Unchanged: "outputs of release.db unchanged", PreviousDeployed: 3},
		want:   want{plan.ActionNoOp, ResultUnchanged, "outputs of release.db unchanged", dag.Succeeded, 3, "deployed"},
	}, {
		name:   "restored by the run's atomic",
		change: plan.ReleaseChange{Action: plan.ActionUpgrade, Observed: plan.Observed{LastRevision: 1, LastStatus: "deployed"}},
		kind:   apply.StepDeploy,
		result: apply.Result{Outcome: apply.Outcome{Status: dag.Succeeded, Restored: true}, Release: record(3, release.StatusDeployed, 1), PreviousDeployed: 1},
		want:   want{plan.ActionUpgrade, ResultDeployed, "", dag.Succeeded, 3, "deployed"},
	}, {
		name:   "cancelled",
		change: plan.ReleaseChange{Action: plan.ActionInstall},
		kind:   apply.StepDeploy,
		result: apply.Result{Outcome: apply.Outcome{Status: dag.Cancelled, Err: boom}},
		want:   want{plan.ActionInstall, ResultFailed, "", dag.Cancelled, 0, ""},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rc := tc.change
			rc.Addr, rc.Name, rc.Namespace = addr("api"), "api", ns
			r := tc.result
			r.ID = rc.Addr.String()
			r.Step = &apply.Step{ID: r.ID, Name: "api", Namespace: ns, Kind: tc.kind}
			other := &plan.ReleaseChange{Addr: addr("web"), Name: "web", Namespace: ns, Action: plan.ActionNoOp}
			outs := outcomesOf(&plan.Plan{Releases: []*plan.ReleaseChange{other, &rc}}, []*apply.Result{&r})
			if len(outs) != 1 {
				t.Fatalf("%d outcomes of one result", len(outs))
			}
			o := outs[0]
			got := want{o.Action, o.Result, o.Reason, o.Step, o.Revision, o.Status}
			if got != tc.want {
				t.Errorf("outcome %+v, want %+v", got, tc.want)
			}
			if o.Addr != "release.api" || o.Name != "api" || o.Namespace != ns || o.Cluster != rc.Cluster {
				t.Errorf("identity %q %s/%s cluster %q", o.Addr, o.Namespace, o.Name, o.Cluster)
			}
			if o.Err != r.Err || o.Restored != r.Restored || o.PreviousDeployed != r.PreviousDeployed {
				t.Errorf("err %v restored %v previous %d, want %v %v %d", o.Err, o.Restored, o.PreviousDeployed, r.Err, r.Restored, r.PreviousDeployed)
			}
		})
	}
}

// Without a plan (a step the plan does not name), the action is the
// step's: a first revision is an install, a later one an upgrade.
func TestReleaseOutcomeActionWithoutPlan(t *testing.T) {
	for _, tc := range []struct {
		kind    apply.StepKind
		version int
		want    plan.Action
	}{
		{apply.StepDeploy, 1, plan.ActionInstall},
		{apply.StepDeploy, 2, plan.ActionUpgrade},
		{apply.StepUninstall, 2, plan.ActionUninstall},
		{apply.StepNoOp, 0, plan.ActionNoOp},
	} {
		r := &apply.Result{Outcome: apply.Outcome{ID: "release.api", Status: dag.Succeeded}, Step: &apply.Step{ID: "release.api", Name: "api", Kind: tc.kind}}
		if tc.version > 0 {
			r.Release = &release.Release{Version: tc.version, Info: &release.Info{Status: release.StatusDeployed}}
		}
		if got := outcomesOf(nil, []*apply.Result{r})[0].Action; got != tc.want {
			t.Errorf("step kind %d at revision %d: action %q, want %q", tc.kind, tc.version, got, tc.want)
		}
	}
}
