package planner

import (
	"context"
	"fmt"
	"slices"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// renaming is a release instance whose moved block names a release the
// stack installed under another Helm name: a rename.
type renaming struct {
	from config.MoveSource
	// old is the old release's history; own the new name's records.
	old, own []*release.Release
	oldName  string
	state    plan.RenameState
	// hist is the history the release is planned from: the old history as
	// copied under the new name (nil: the new name's own records, once it
	// has a revision of its own).
	hist []*release.Release
}

// renaming finds the release a moved block renames to inst: a release
// of the stack its files no longer declare (on inst's cluster), whose
// newest record names one of inst's move sources (release.AddressLabel;
// records without it: the source's default Helm name), nearest first;
// else a release of inst's namespace no stack applied, named as a
// source's default Helm name (helmRenaming).
// It says how far an earlier apply got from the records: the new name's
// records copied from the old one (release.RenamedFromLabel), and
// whether the new name has a revision of its own. A rename across
// namespaces, or onto a release that exists, is an error at the moved
// block.
func (c *computer) renaming(ctx context.Context, inst *config.ReleaseInstance) (*renaming, error) {
	sources := c.in.Stack.Moves.Sources(inst.Addr)
	if len(sources) == 0 {
		return nil, nil
	}
	rd, err := c.renderer(ctx, inst.Cluster)
	if err != nil {
		return nil, err
	}
	keys, err := c.undeclared(ctx, rd)
	if err != nil {
		return nil, err
	}
	best, rank := (*renaming)(nil), len(sources)
	for _, k := range keys {
		hist, err := c.history(ctx, rd, k.Namespace, k.Name)
		if err != nil {
			return nil, err
		}
		last := c.stackRelease(hist)
		if last == nil {
			continue
		}
		if i := sourceRank(last, sources); i >= 0 && i < rank {
			best, rank = &renaming{from: sources[i], old: hist, oldName: k.Name}, i
		}
	}
	if best == nil {
		if best, err = c.helmRenaming(ctx, rd, inst, sources); best == nil || err != nil {
			return nil, err
		}
	}
	// The rename copies the old records: read them whole.
	if best.old, err = c.fullHistory(ctx, rd, best.old[0].Namespace, best.oldName); err != nil {
		return nil, err
	}
	last := best.old[len(best.old)-1]
	if last.Namespace != inst.Namespace {
		return nil, moveDiag(best.from, "Rename across namespaces",
			fmt.Sprintf("This moved block moves %s, release %s in namespace %s, to %s in namespace %s. Convoy renames releases within a namespace only: move it in its own namespace, or remove the moved block to uninstall it and install the new one.",
				best.from.Addr, best.oldName, last.Namespace, inst.Addr, inst.Namespace))
	}
	if last.Info.Status.IsPending() {
		return nil, &release.PendingError{Name: last.Name, Namespace: last.Namespace, Status: last.Info.Status, Revision: last.Version, Since: last.Info.LastDeployed, RunID: last.Labels[release.RunLabel]}
	}
	own, err := c.history(ctx, rd, inst.Namespace, inst.Name)
	if err != nil {
		return nil, err
	}
	best.own = own
	copied := 0
	for _, r := range own {
		if r.Labels[release.RenamedFromLabel] == best.oldName {
			copied++
		}
	}
	if copied > 0 {
		// Records copied from a release of the old name: they must be
		// this release's (one helm installed under the old name after a
		// rename finished is another, and its records are not ours to
		// delete).
		ok, err := c.view(rd).CopiesOf(ctx, inst.Namespace, best.oldName, inst.Name)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, moveDiag(best.from, "Release renamed already",
				fmt.Sprintf("This moved block renames release %s to %s in namespace %s, which a rename did already; the release named %s now (revision %d, %s) is another. Remove the moved block, or uninstall %s.",
					best.oldName, inst.Name, inst.Namespace, best.oldName, last.Version, last.Info.Status, best.oldName))
		}
	}
	labels := map[string]string{release.AddressLabel: inst.Addr.LabelValue()}
	switch {
	case len(own) == 0:
		best.state, best.hist = plan.RenameNotStarted, release.RenamedHistory(best.old, best.oldName, inst.Name, labels)
	case copied == 0:
		return nil, moveDiag(best.from, "Rename onto an existing release",
			fmt.Sprintf("This moved block renames release %s to %s in namespace %s, where a release %s exists (revision %d, %s). Choose another name, or uninstall %s first.",
				best.oldName, inst.Name, inst.Namespace, inst.Name, own[len(own)-1].Version, own[len(own)-1].Info.Status, inst.Name))
	case copied == len(own) && own[len(own)-1].Version <= last.Version:
		best.state, best.hist = plan.RenameCopied, release.RenamedHistory(best.old, best.oldName, inst.Name, labels)
	default:
		best.state = plan.RenameDeployed
	}
	return best, nil
}

// helmRenaming finds the release a moved block renames to inst among
// the releases of inst's namespace that no stack applied (installed by
// helm, then declared and imported): records without a stack's label,
// named as a move source's default Helm name (release.web: web), which no
// release of the stack declares.
func (c *computer) helmRenaming(ctx context.Context, rd *release.Renderer, inst *config.ReleaseInstance, sources []config.MoveSource) (*renaming, error) {
	declared, err := c.declared(ctx, rd.ClusterID())
	if err != nil {
		return nil, err
	}
	for _, s := range sources {
		name := defaultName(s.Addr)
		if name == inst.Name || declared[release.RecordKey{Namespace: inst.Namespace, Name: name}] {
			continue
		}
		hist, err := c.history(ctx, rd, inst.Namespace, name)
		if err != nil {
			return nil, err
		}
		if len(hist) == 0 {
			continue
		}
		last := hist[len(hist)-1]
		if last.Labels[release.StackLabel] != "" || last.Info.Status == release.StatusUninstalled {
			continue
		}
		return &renaming{from: s, old: hist, oldName: name}, nil
	}
	return nil, nil
}

// stackRelease is the newest record of hist when it is this stack's and
// not uninstalled (a release the stack may rename or uninstall), or nil.
func (c *computer) stackRelease(hist []*release.Release) *release.Release {
	if len(hist) == 0 {
		return nil
	}
	last := hist[len(hist)-1]
	if !c.stackOwns(last) || last.Info.Status == release.StatusUninstalled {
		return nil
	}
	return last
}

// sourceRank is the index of the move source the record r was written
// at, or -1.
func sourceRank(r *release.Release, sources []config.MoveSource) int {
	label := r.Labels[release.AddressLabel]
	for i, s := range sources {
		if (label != "" && label == s.Addr.LabelValue()) || (label == "" && defaultName(s.Addr) == r.Name) {
			return i
		}
	}
	return -1
}

// labelled lists the releases with a record of the stack on rd's
// cluster, as the plan's view reads them (ClusterView.StackRecords: once
// per plan, the namespaces the plan reads anyway from their records).
func (c *computer) labelled(ctx context.Context, rd *release.Renderer) ([]release.RecordKey, error) {
	return c.view(rd).StackRecords(ctx, c.in.Stack.ID())
}

// readNamespaces are the namespaces of cluster id whose records the plan
// reads whatever it finds (Reads.Namespaces): those the stack declares
// there, when the plan plans all its releases.
func (c *computer) readNamespaces(ctx context.Context, id kube.ClusterID) ([]string, error) {
	if !c.plansAll {
		return nil, nil
	}
	declared, err := c.declared(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []string
	for k := range declared {
		out = append(out, k.Namespace)
	}
	return out, nil
}

// undeclared lists the releases with records of the stack on rd's
// cluster that the stack's files do not declare there (renamed or
// removed releases), listed once per cluster.
func (c *computer) undeclared(ctx context.Context, rd *release.Renderer) ([]release.RecordKey, error) {
	id := rd.ClusterID()
	return c.orphans.Get(id, func() ([]release.RecordKey, error) {
		declared, err := c.declared(ctx, id)
		if err != nil {
			return nil, err
		}
		recs, err := c.labelled(ctx, rd)
		if err != nil {
			return nil, err
		}
		var out []release.RecordKey
		for _, k := range recs {
			if !declared[k] {
				out = append(out, k)
			}
		}
		return out, nil
	})
}

// declared are the releases the stack's files declare on cluster id.
func (c *computer) declared(ctx context.Context, id kube.ClusterID) (map[release.RecordKey]bool, error) {
	return c.declaredOn.Get(id, func() (map[release.RecordKey]bool, error) {
		out := map[release.RecordKey]bool{}
		for _, r := range c.in.Stack.Releases {
			e, err := c.renderer(ctx, r.Cluster)
			if err != nil {
				return nil, err
			}
			if e.ClusterID() == id {
				out[release.RecordKey{Namespace: r.Namespace, Name: r.Name}] = true
			}
		}
		return out, nil
	})
}

// renamedBy returns the release instance whose moved block renames the
// release whose newest record is last (on cluster id, the cluster block
// cluster), when it is on the
// same cluster: its plan carries the rename, and the release is not
// removed. A rename across clusters is an error at the moved block.
func (c *computer) renamedBy(ctx context.Context, id kube.ClusterID, cluster string, last *release.Release) (*config.ReleaseInstance, error) {
	st := c.in.Stack
	if st.Moves.Empty() {
		return nil, nil
	}
	for _, inst := range st.Releases {
		sources := st.Moves.Sources(inst.Addr)
		i := sourceRank(last, sources)
		if i < 0 {
			continue
		}
		rd, err := c.renderer(ctx, inst.Cluster)
		if err != nil {
			return nil, err
		}
		if rd.ClusterID() != id {
			return nil, moveDiag(sources[i], "Rename across clusters",
				fmt.Sprintf("This moved block moves %s, release %s on %s, to %s on %s. Convoy moves and renames releases within a cluster and namespace only: remove the moved block to uninstall it there and install it here.",
					sources[i].Addr, last.Name, clusterText(cluster), inst.Addr, clusterText(clusterName(inst.Cluster))))
		}
		return inst, nil
	}
	return nil, nil
}

// moveDiag is an error at a moved block.
func moveDiag(src config.MoveSource, summary, detail string) error {
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: src.Block.Ptr()}}
}

// noteRename records what the rename of rc does: where it is from, how
// far an earlier apply got, and, for each object of the old release's
// deployed revision, whether it keeps its identity or is replaced.
func (c *computer) noteRename(ctx context.Context, inst *config.ReleaseInstance, rc *plan.ReleaseChange, rn *renaming) error {
	from := rn.from.Addr
	rc.MovedFrom = &from
	oldLast := rn.old[len(rn.old)-1]
	r := &plan.Rename{From: rn.oldName, FromRevision: oldLast.Version, FromStatus: string(oldLast.Info.Status), State: rn.state, Revisions: len(rn.old)}
	if n := len(rn.own); n > 0 {
		r.ToRevision, r.ToStatus = rn.own[n-1].Version, string(rn.own[n-1].Info.Status)
	}
	if rn.state == plan.RenameCopied {
		r.Copied = len(rn.own)
	}
	rc.Rename = r
	if rn.hist != nil && !slices.ContainsFunc(rc.Reasons, func(x plan.Reason) bool { return x.Kind == plan.ReasonRename }) {
		// Planned without a rendering of its own (values known only at
		// apply, kinds not served yet): the rename is a reason all the same.
		rc.Reasons = append([]plan.Reason{{Kind: plan.ReasonRename, Detail: fmt.Sprintf("Helm release %s is renamed %s", rn.oldName, inst.Name)}}, rc.Reasons...)
	}
	if rn.hist == nil {
		return nil // the new name's revision is written: only the old records go
	}
	// The objects the old release has: those of its deployed revision,
	// else of its newest (as an upgrade's previous objects).
	base := oldLast
	for _, h := range rn.old {
		if h.Info.Status == release.StatusDeployed {
			base = h
		}
	}
	if base.Info.Status == release.StatusUninstalled || rc.Refused() {
		return nil
	}
	rd, err := c.renderer(ctx, inst.Cluster)
	if err != nil {
		return err
	}
	objs, _, err := rd.RecordObjects(base)
	if err != nil {
		return err
	}
	var old, next []plan.ObjectRef
	for _, o := range objs {
		old = append(old, ObjectRef(kube.RefOf(o)))
	}
	for _, o := range rc.Objects {
		if o.Action != plan.ObjectDelete {
			next = append(next, o.Ref)
		}
	}
	r.Objects = plan.RenameObjects(rn.oldName, inst.Name, old, next)
	// Rendered under its name is not kept when an immutable field changes.
	plan.MarkRecreated(r.Objects, rc.Objects)
	rc.Warnings = append(rc.Warnings, replacedClaims(objs, r.Objects)...)
	return nil
}

// replacedClaims warns of the StatefulSets a rename replaces by ones of
// another name that claim volumes: their PersistentVolumeClaims stay,
// unused, and the new StatefulSet claims new, empty ones. One recreated
// under its name mounts its claims again (the impact says so).
func replacedClaims(objs []*unstructured.Unstructured, renamed []plan.RenamedObject) []string {
	var out []string
	for i, o := range objs {
		if i >= len(renamed) || renamed[i].Kept || renamed[i].Recreated || o.GetKind() != "StatefulSet" {
			continue
		}
		claims, _, _ := unstructured.NestedSlice(o.Object, "spec", "volumeClaimTemplates")
		if len(claims) == 0 {
			continue
		}
		by := "nothing"
		if rb := renamed[i].ReplacedBy; rb != nil {
			by = rb.String()
		}
		out = append(out, fmt.Sprintf("%s is replaced by %s: its PersistentVolumeClaims stay but are not used, the new StatefulSet claims new, empty volumes; keep its name (a fullnameOverride) to keep its data", renamed[i].Ref, by))
	}
	return out
}

// clusterText names a cluster block in a message.
func clusterText(name string) string {
	if name == "" {
		return "the default cluster"
	}
	return fmt.Sprintf("cluster %q", name)
}
