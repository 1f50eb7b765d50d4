package run

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/run/apply"
)

// renameStep makes the deploy step of a renamed release (plan.Rename)
// carry out the rename around the upgrade: before it prepares, the old
// release's records are copied under the new name (done again, as far as
// needed, after an interrupted apply); the upgrade deletes the objects it
// replaces once the new ones are ready; once it deployed, the old records
// are deleted. Each write leaves records that say how far the rename got
// (release.RenamedFromLabel), so a rename killed anywhere is planned from
// where it stopped.
func renameStep(step *apply.Step, rc *plan.ReleaseChange, eng *release.Engine) {
	rn := rc.Rename
	store := eng.Storage(rc.Namespace)
	prepare, labels := step.Prepare, renameLabels(rc)
	step.Prepare = func(ctx context.Context, applied map[string]*release.Release) (*release.Prepared, error) {
		if rn.State != plan.RenameDeployed {
			if _, err := store.CopyHistory(ctx, rn.From, rc.Name, labels); err != nil {
				return nil, fmt.Errorf("rename %s to %s: %w", rn.From, rc.Name, err)
			}
		}
		p, err := prepare(ctx, applied)
		if p != nil {
			// The objects named after the old release serve until the
			// new ones are ready.
			p.Request.DeleteLast = true
		}
		return p, err
	}
	step.Finish = func(ctx context.Context) error {
		if err := store.DeleteHistory(ctx, rn.From); err != nil {
			return fmt.Errorf("rename %s to %s: revision deployed, the old records remain: %w", rn.From, rc.Name, err)
		}
		return nil
	}
}

// renameLabels are the labels a rename gives the copied records: the
// release's new address.
func renameLabels(rc *plan.ReleaseChange) map[string]string {
	return map[string]string{release.AddressLabel: rc.Addr.Instance.LabelValue()}
}

// finishRenames deletes the old records of renamed releases whose new
// revision an interrupted apply deployed already (plan.RenameDeployed on
// an unchanged release): all that is left of their rename. It runs
// before the walk, under the stack lock.
func finishRenames(ctx context.Context, o Options, p *plan.Plan, engineFor func(cluster string) (*release.Engine, error)) error {
	for _, rc := range p.Releases {
		if rc.Rename == nil || rc.Action != plan.ActionNoOp {
			continue
		}
		eng, err := engineFor(rc.Cluster)
		if err != nil {
			return err
		}
		if err := eng.Storage(rc.Namespace).DeleteHistory(ctx, rc.Rename.From); err != nil {
			return fmt.Errorf("%s: finish the rename of %s: %w", rc.Addr, rc.Rename.From, err)
		}
		o.announce(fmt.Sprintf("%s: rename of %s to %s finished: the old records are deleted", rc.Addr, rc.Rename.From, rc.Name))
	}
	return nil
}
