package planner

import (
	"context"
	"fmt"
	"maps"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/addrs"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// releaseMoved plans a release instance (release) and says whether a
// moved block brought it where it is.
// A moved block that gives the release a new Helm name renames it
// (rename.go): it is planned from the old release's records.
func (c *computer) releaseMoved(ctx context.Context, inst *config.ReleaseInstance) (*plan.ReleaseChange, error) {
	if c.in.Stack.Moves.Empty() {
		return c.release(ctx, inst, nil)
	}
	rn, err := c.renaming(ctx, inst)
	if err != nil {
		return nil, err
	}
	rc, err := c.release(ctx, inst, rn)
	if err != nil || rc == nil {
		return rc, err
	}
	if rn != nil {
		return rc, c.noteRename(ctx, inst, rc, rn)
	}
	return rc, c.noteMoved(ctx, inst, rc)
}

// noteMoved records the address a moved block moved the release from.
// Convoy finds a release by its Helm name and namespace, so a release
// moved to a new address with the same name is planned from its records
// as if it had always been there; which address it was at is the
// AddressLabel of its newest record (records written before the label
// existed have none: the nearest source is named). A release whose
// record already names its address has moved before: nothing to say; one
// whose older revision names it was rolled back past its move (helm
// rollback copies the old labels): its address is put back quietly.
// Apply writes the new address on the deployed record, no revision.
func (c *computer) noteMoved(ctx context.Context, inst *config.ReleaseInstance, rc *plan.ReleaseChange) error {
	sources := c.in.Stack.Moves.Sources(inst.Addr)
	if len(sources) == 0 || rc.Refused() {
		return nil
	}
	rd, err := c.renderer(ctx, inst.Cluster)
	if err != nil {
		return err
	}
	hist, err := c.history(ctx, rd, inst.Namespace, inst.Name)
	if err != nil || len(hist) == 0 {
		return err // nothing installed: nothing moved
	}
	last := hist[len(hist)-1]
	if last.Info.Status == release.StatusUninstalled {
		return nil
	}
	from, ok := movedFrom(last, inst.Addr, sources)
	if !ok {
		return nil
	}
	if !release.RecordedAt(hist, inst.Addr.LabelValue()) {
		rc.MovedFrom = &from
	}
	if rc.Action == plan.ActionNoOp {
		rc.Relabel = maps.Clone(rc.Relabel)
		if rc.Relabel == nil {
			rc.Relabel = map[string]string{}
		}
		rc.Relabel[release.AddressLabel] = inst.Addr.LabelValue()
	}
	return nil
}

// movedFrom is the source of a move the record r was written at.
func movedFrom(r *release.Release, at addrs.ReleaseInstance, sources []config.MoveSource) (addrs.ReleaseInstance, bool) {
	label := r.Labels[release.AddressLabel]
	if label == "" {
		return sources[0].Addr, true
	}
	if label == at.LabelValue() {
		return addrs.ReleaseInstance{}, false
	}
	for _, s := range sources {
		if s.Addr.LabelValue() == label {
			return s.Addr, true
		}
	}
	return addrs.ReleaseInstance{}, false
}

// orphan plans a release of the stack its files no longer declare: the
// removed block naming it says whether it is uninstalled (destroy, the
// default) or forgotten (destroy = false); without one it is uninstalled.
func (c *computer) orphan(ctx context.Context, rd *release.Renderer, cluster string, last *release.Release) (*plan.ReleaseChange, error) {
	rb, at := removedBlockOf(c.in.Stack, last)
	if rb != nil && !rb.Destroy {
		rc := &plan.ReleaseChange{
			Addr: plan.RemovedAddr(cluster, last.Namespace, last.Name), RemovedFrom: &at,
			Name: last.Name, Namespace: last.Namespace, Cluster: cluster,
			Action:   plan.ActionForget,
			Reasons:  []plan.Reason{{Kind: plan.ReasonForget, Detail: fmt.Sprintf("removed block at %s (destroy = false)", rb.DeclRange)}},
			Observed: plan.Observed{LastRevision: last.Version, LastStatus: string(last.Info.Status)},
		}
		rc.Chart.Before = chartRef(last.Chart)
		return rc, nil
	}
	rc, err := c.uninstall(ctx, rd, cluster, last)
	if err != nil || rb == nil {
		return rc, err
	}
	rc.RemovedFrom = &at
	rc.Reasons = []plan.Reason{{Kind: plan.ReasonRemoved, Detail: fmt.Sprintf("removed block at %s", rb.DeclRange)}}
	return rc, nil
}

// removedBlockOf returns the removed block naming the release whose
// newest record is r, and the address it names: the record's
// AddressLabel, or, for records without one, the address whose default
// Helm name (the block name, NAME-KEY for instances) is r's name.
func removedBlockOf(st *config.Stack, r *release.Release) (*config.Removed, addrs.ReleaseInstance) {
	label := r.Labels[release.AddressLabel]
	for _, rb := range st.Removed {
		from := rb.From
		switch {
		case label != "" && from.Keyed && label == from.Addr.LabelValue():
			return rb, from.Addr
		case label != "" && !from.Keyed && from.Addr.Release.LabelOf(label):
			return rb, from.Addr
		case label == "" && defaultName(from.Addr) == r.Name:
			return rb, from.Addr
		}
	}
	return nil, addrs.ReleaseInstance{}
}

// defaultName is the Helm name of a release instance that sets none.
func defaultName(a addrs.ReleaseInstance) string {
	switch a.Key.Kind {
	case addrs.IntKeyKind:
		return fmt.Sprintf("%s-%d", a.Release.Name, a.Key.Int)
	case addrs.StringKeyKind:
		return a.Release.Name + "-" + a.Key.Str
	}
	return a.Release.Name
}
