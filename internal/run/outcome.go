package run

import (
	"context"
	"fmt"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/run/apply"
	"github.com/convoy-sh/convoy/internal/stack/dag"
)

// Result is how a run left a release, as the CLI's table and the
// controller's status say it.
type Result string

// Results.
const (
	// ResultDeployed: a deploy step left revision Revision, whose record's
	// status is Status (failed when the deploy failed).
	ResultDeployed Result = "deployed"
	// ResultRolledBack: the deploy failed and its own atomic rolled it back;
	// Revision is the rollback's record (deployed), the step failed.
	ResultRolledBack Result = "rolled back"
	// ResultUnchanged: the plan left the release as it is, or a release
	// rendered only at apply rendered as deployed (Reason says why; Revision
	// is the deployed one).
	ResultUnchanged Result = "unchanged"
	// ResultUninstalled: an uninstall step succeeded.
	ResultUninstalled Result = "uninstalled"
	// ResultSkipped: the step never ran (Reason: a dependency failed).
	ResultSkipped Result = "skipped"
	// ResultFailed: an uninstall that failed, or a deploy that failed
	// before it wrote a revision (Step says how it ended: failed or
	// cancelled).
	ResultFailed Result = "failed"
)

// ReleaseOutcome is what an apply or destroy did to one release, derived
// once from the plan and the step's result (outcomesOf) for every edge:
// the CLI prints it, the controller writes it into the Stack's status.
type ReleaseOutcome struct {
	// Addr is the release's address in the stack (`release.api["eu"]`).
	Addr            string
	Name, Namespace string
	// Cluster is the release's cluster block ("": the default cluster).
	Cluster string
	// Action is what the plan did, in the words the user approved; a
	// release rendered only at apply that rendered as deployed is a no-op.
	Action plan.Action
	// Result is how the run left the release; Reason says why it was
	// skipped or unchanged.
	Result Result
	Reason string
	// Step is how the release's step ended (succeeded, failed, skipped,
	// cancelled); Err is its error.
	Step dag.Status
	Err  error
	// Revision and Status are the release's newest record after the run:
	// the one its step left (written, rolled back to, found unchanged,
	// restored to), else the newest the plan observed (0 and "": none).
	Revision int
	Status   string
	// PreviousDeployed is the revision deployed before the run (0: none):
	// what an atomic restore went back to, or uninstalled when 0.
	PreviousDeployed int
	// Restored says an atomic run undid the release's change; RestoreErr
	// that undoing it failed.
	Restored   bool
	RestoreErr error
	Duration   time.Duration
	// Now is, for a run that lost the stack's lock, what the release's
	// newest record says after it ("revision 3 deployed, by run …"; "":
	// the same as Revision and Status, or unknown): another run took the
	// stack over, and the records are its.
	Now string
}

// recordsNow fills in Now of each outcome from the releases' newest
// records, for a run that lost the stack's lock. A record that cannot be
// read says so.
func recordsNow(ctx context.Context, out []ReleaseOutcome, engineFor func(string) (*release.Engine, error)) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for i := range out {
		o := &out[i]
		eng, err := engineFor(o.Cluster)
		if err != nil {
			o.Now = "unknown: " + err.Error()
			continue
		}
		h, err := eng.Storage(o.Namespace).History(ctx, o.Name)
		switch {
		case err != nil:
			o.Now = "unknown: " + err.Error()
		case len(h) == 0:
			if o.Revision != 0 {
				o.Now = "no record"
			}
		default:
			last := h[len(h)-1]
			if last.Version == o.Revision && string(last.Info.Status) == o.Status {
				continue
			}
			o.Now = fmt.Sprintf("revision %d %s", last.Version, last.Info.Status)
			if run := last.Labels[release.RunLabel]; run != "" {
				o.Now += ", by run " + run
			}
		}
	}
}

// outcomesOf turns the steps' results (in the plan's order) into the
// releases' outcomes.
func outcomesOf(p *plan.Plan, results []*apply.Result) []ReleaseOutcome {
	byAddr := map[string]*plan.ReleaseChange{}
	if p != nil {
		for _, rc := range p.Releases {
			byAddr[rc.Addr.String()] = rc
		}
	}
	out := make([]ReleaseOutcome, 0, len(results))
	for _, r := range results {
		out = append(out, outcomeOf(byAddr[r.ID], r))
	}
	return out
}

func outcomeOf(rc *plan.ReleaseChange, r *apply.Result) ReleaseOutcome {
	s := r.Step
	o := ReleaseOutcome{
		Addr: r.ID, Name: s.Name, Namespace: s.Namespace,
		Step: r.Status, Err: r.Err, PreviousDeployed: r.PreviousDeployed,
		Restored: r.Restored, RestoreErr: r.RestoreErr, Duration: r.Duration,
	}
	if rc != nil {
		o.Cluster, o.Action = rc.Cluster, rc.Action
		o.Revision, o.Status = rc.Observed.LastRevision, rc.Observed.LastStatus
	}
	switch {
	case r.Unchanged != "":
		o.Action = plan.ActionNoOp
	case o.Action != "":
	case s.Kind == apply.StepUninstall:
		o.Action = plan.ActionUninstall
	case s.Kind == apply.StepNoOp:
		o.Action = plan.ActionNoOp
	case r.Release != nil && r.Release.Version == 1:
		o.Action = plan.ActionInstall
	default:
		o.Action = plan.ActionUpgrade
	}
	if r.Release != nil {
		o.Revision = r.Release.Version
		if r.Release.Info != nil {
			o.Status = string(r.Release.Info.Status)
		}
	}
	switch {
	case r.Status == dag.Skipped:
		o.Result, o.Reason = ResultSkipped, r.Reason
	case s.Kind == apply.StepNoOp:
		o.Result = ResultUnchanged
	case r.Unchanged != "":
		o.Result, o.Reason = ResultUnchanged, r.Unchanged
	case s.Kind == apply.StepUninstall && r.Status == dag.Succeeded:
		o.Result = ResultUninstalled
	case r.Release != nil && s.Kind == apply.StepDeploy && r.Status == dag.Failed && r.Release.Info != nil && r.Release.Info.RollbackRevision != 0:
		// Its own atomic rolled the failed upgrade back: the record left
		// is the rollback's, deployed, but the release failed.
		o.Result = ResultRolledBack
	case r.Release != nil && s.Kind == apply.StepDeploy:
		o.Result = ResultDeployed
	default:
		o.Result = ResultFailed
	}
	return o
}
