package run

import (
	"context"
	"fmt"
	"maps"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// keepMovedNames finds the implicit moves of the stack (count added to a
// release block: release.x → release.x[0]; count removed: the reverse)
// in the stack's release records, and evaluates the stack again with the
// moved instances keeping the Helm release name their records have, as
// Terraform moves an instance implicitly: the release is neither renamed
// nor uninstalled and installed again. An instance moved when its block
// sets no name, records of the stack exist under its old default name and
// none under its new one, and no other instance of the stack has the old
// name. ls.moves says which moved since their records were written (for
// the plan's notes; apply writes the new address on the records).
//
// The records are read through each cluster's view (planner.EngineView):
// the stack's labelled records (StackRecords, one list per cluster), and
// only when an instance's old name is among them, the histories of the
// stack's releases (StackReleases). The stack is evaluated again only
// when an instance moved: which instances a stack has, on which cluster
// and namespace, are what its evaluation says, so the records to look in
// are known only after one; and a kept name is the instance's name for
// everything the stack evaluates from it (release.x[0].name in another
// release's values), so it must be known to the evaluation itself.
func (ls *Loaded) keepMovedNames(ctx context.Context, cl *Clusters) error {
	st := ls.Stack
	candidates := st.ImplicitMoves()
	if len(candidates) == 0 {
		return nil
	}
	type nameKey struct {
		cluster         kube.ClusterID
		namespace, name string
	}
	taken := map[nameKey]bool{}
	clusterOf := map[config.ReleaseInstanceAddr]kube.ClusterID{}
	views := map[kube.ClusterID]planner.ClusterView{}
	for _, inst := range st.Releases {
		eng, err := cl.Engine(ctx, inst.Cluster)
		if err != nil {
			return fmt.Errorf("%s: %w", inst.Addr, err)
		}
		id := eng.Kube().ClusterID()
		if views[id] == nil {
			views[id] = planner.EngineView(eng, planner.Reads{})
		}
		clusterOf[inst.Addr] = id
		taken[nameKey{id, inst.Namespace, inst.Name}] = true
	}
	recorded := map[kube.ClusterID]map[release.RecordKey]bool{}
	keys := func(id kube.ClusterID) (map[release.RecordKey]bool, error) {
		if m, ok := recorded[id]; ok {
			return m, nil
		}
		ks, err := views[id].StackRecords(ctx, st.ID())
		if err != nil {
			return nil, err
		}
		m := map[release.RecordKey]bool{}
		for _, k := range ks {
			m[k] = true
		}
		recorded[id] = m
		return m, nil
	}
	kept := map[config.ReleaseInstanceAddr]string{}
	var moved []movedSince
	for _, m := range candidates {
		inst, id := st.Release(m.Addr), clusterOf[m.Addr]
		recs, err := keys(id)
		if err != nil {
			return err
		}
		from := release.RecordKey{Namespace: inst.Namespace, Name: m.FromName}
		if recs[release.RecordKey{Namespace: inst.Namespace, Name: inst.Name}] || !recs[from] ||
			taken[nameKey{id, inst.Namespace, m.FromName}] {
			continue
		}
		// Read once per cluster: the view keeps what it read.
		hists, err := views[id].StackReleases(ctx, st.ID())
		if err != nil {
			return err
		}
		hist := hists[from]
		if len(hist) == 0 {
			continue
		}
		last := hist[len(hist)-1]
		if last.Labels[release.StackLabel] != st.ID() || last.Info == nil || last.Info.Status == release.StatusUninstalled {
			continue
		}
		kept[m.Addr] = m.FromName
		if last.Labels[release.AddressLabel] != m.Addr.LabelValue() {
			// Not recorded at its new address yet: the plan says so,
			// and apply records it (noteMoves). Unless an older
			// revision was written there: a helm rollback past the
			// move copied the old address; apply puts it back quietly.
			moved = append(moved, movedSince{m, !release.RecordedAt(hist, m.Addr.LabelValue())})
		}
	}
	if len(kept) == 0 {
		return nil
	}
	opts := ls.opts
	opts.KeptNames = kept
	again, diags := config.Evaluate(ctx, ls.Config, opts)
	if err := diagError(diags, ls.Config); err != nil {
		return err
	}
	ls.Stack, ls.moves = again, moved
	return nil
}

// movedSince is an implicit move found in a stack's records; note says
// whether the plan says so (false: recorded before, and rolled back past).
type movedSince struct {
	config.ImplicitMove
	note bool
}

// noteMoves says on each release of the plan that moved since its
// records were written that it moved and kept its name, and has apply
// write its new address on the record: an upgrade's new revision carries
// it (ReleaseRequest), an unchanged release's deployed record is
// relabelled (no revision). A move already recorded is not repeated.
func (ls *Loaded) noteMoves(p *plan.Plan) {
	for _, m := range ls.moves {
		for _, rc := range p.Releases {
			if rc.Addr != plan.InstanceAddr(m.Addr) {
				continue
			}
			if m.note {
				rc.Warnings = append(rc.Warnings, moveNote(m.ImplicitMove))
			}
			if rc.Action == plan.ActionNoOp {
				rc.Relabel = maps.Clone(rc.Relabel)
				if rc.Relabel == nil {
					rc.Relabel = map[string]string{}
				}
				rc.Relabel[release.AddressLabel] = m.Addr.LabelValue()
			}
		}
	}
}

func moveNote(m config.ImplicitMove) string {
	what := "count was added to its release block"
	if !m.CountAdded {
		what = "count was removed from its release block"
	}
	return fmt.Sprintf("moved from %s (%s, as Terraform moves an instance implicitly): it keeps its Helm release name %q; set name to choose another (a new release)", m.From, what, m.FromName)
}
