package planner

import (
	"context"
	"fmt"
	"slices"

	"github.com/convoy-sh/convoy/internal/plan"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// noteInterrupted notes a record an interrupted run left pending (nil:
// none): the plan shows what it observed, and apply marks it failed first.
func noteInterrupted(r *plan.ReleaseChange, i *plan.Interrupted) {
	if i == nil {
		return
	}
	r.Interrupted, r.Observed.LastStatus = i, i.Status
	r.Warnings = append(r.Warnings, i.String())
}

// observe reads a release's records for planning. A newest record that a
// run of this stack left pending, and that run is gone, is returned as
// failed (apply marks it so before anything else) with what was
// interrupted. The cached history is not modified. With full, its newest
// and deployed records are read whole (fullHistory); otherwise they are
// partial, as their metadata tells them (history).
func (c *computer) observe(ctx context.Context, rd *release.Renderer, namespace, name string, full bool) ([]*release.Release, *plan.Interrupted, error) {
	read := c.history
	if full {
		read = c.fullHistory
	}
	hist, err := read(ctx, rd, namespace, name)
	if err != nil || len(hist) == 0 {
		return hist, nil, err
	}
	last := hist[len(hist)-1]
	run := last.Labels[release.RunLabel]
	if !last.Info.Status.IsPending() || run == "" || !c.stackOwns(last) ||
		c.in.Interrupted == nil || !c.in.Interrupted(run) {
		return hist, nil, nil
	}
	failed, info := *last, *last.Info
	info.Status = release.StatusFailed
	failed.Info = &info
	out := append(slices.Clone(hist[:len(hist)-1]), &failed)
	return out, &plan.Interrupted{RunID: run, Revision: last.Version, Status: string(last.Info.Status)}, nil
}

// stackOwns says whether a release record is this stack's: its stack label
// names the stack, and no Stack of another namespace wrote it (in the
// controller, Input.StackNamespace; a record without the namespace label
// is a CLI's, or older: the stack's). Two namespaces' Stacks of one
// stack ID never plan, uninstall or rename each other's releases.
func (c *computer) stackOwns(r *release.Release) bool {
	if r.Labels[release.StackLabel] != c.in.Stack.ID() {
		return false
	}
	ns, mine := r.Labels[release.StackNamespaceLabel], c.in.StackNamespace
	return mine == "" || ns == "" || ns == mine
}

// ownership notes who owns a release whose newest record this stack did
// not write. Another stack's: apply refuses to change it unless the
// release block adopts it from that stack (adopt_from_stack). No stack's
// (a helm install, or let go by a stack that is gone): apply refuses
// unless the release block says adopt = true, or a stack let it go (a
// removed block with destroy = false, a Stack deleted without prune). In
// the controller (Input.StackNamespace), a release another namespace's
// Stack wrote or let go is never taken over.
func (c *computer) ownership(rc *plan.ReleaseChange, inst *config.ReleaseInstance, last *release.Release) {
	if last == nil || last.Info.Status == release.StatusUninstalled {
		return
	}
	owner, ns, letGo := last.Labels[release.StackLabel], last.Labels[release.StackNamespaceLabel], last.Labels[release.LetGoLabel]
	mine := c.in.StackNamespace
	otherNamespace := mine != "" && ns != "" && ns != mine
	if owner == c.in.Stack.ID() && !otherNamespace {
		return
	}
	if owner != "" && !otherNamespace {
		rc.Owner, rc.Adopt = owner, inst.AdoptFromStack == owner
		switch {
		case rc.Adopt && mine != "" && ns == "":
			// A CLI's stack: its namespace is not known to be this one.
			rc.Owner, rc.Adopt = "", false
			rc.Takeover = &plan.Takeover{Stack: owner, Refusal: fmt.Sprintf("a Stack takes over only releases a Stack of its namespace (%s) wrote", mine)}
			rc.Warnings = append(rc.Warnings, rc.Takeover.String())
		case rc.Adopt:
			rc.Warnings = append(rc.Warnings, fmt.Sprintf("taken over from stack %q (adopt_from_stack): from revision %d on, this stack owns it", owner, last.Version+1))
		case inst.AdoptFromStack != "":
			rc.Warnings = append(rc.Warnings, fmt.Sprintf("owned by stack %q, not %q (adopt_from_stack): apply refuses to change it", owner, inst.AdoptFromStack))
		default:
			rc.Warnings = append(rc.Warnings, fmt.Sprintf("owned by stack %q (revision %d): apply refuses to change it; adopt_from_stack = %q in its release block takes it over", owner, last.Version, owner))
		}
		return
	}
	t := &plan.Takeover{Stack: owner, Namespace: ns}
	if owner == "" {
		t.Stack, t.LetGo = letGo, letGo != ""
	}
	switch {
	case otherNamespace:
		t.Refusal = fmt.Sprintf("a Stack of namespace %s never takes over a release a Stack of another namespace wrote", mine)
	case t.LetGo && (mine == "" || ns == mine):
		// A stack of this namespace let it go (or, for the CLI, any
		// stack): the documented way of moving a release between stacks.
		t.Allowed = true
	default:
		t.Allowed = inst.Adopt
	}
	rc.Takeover = t
	rc.Warnings = append(rc.Warnings, t.String())
}

// conflictOwners names the stack that owns each release owning one of the
// release's objects (its newest record's stack label), so that the
// refusal suggests take_ownership only for releases no stack owns.
func (c *computer) conflictOwners(ctx context.Context, rd *release.Renderer, rc *plan.ReleaseChange) error {
	for i := range rc.Conflicts {
		cf := &rc.Conflicts[i]
		hist, err := c.history(ctx, rd, cf.OwnerNamespace, cf.OwnerRelease)
		if err != nil {
			return err
		}
		if len(hist) > 0 {
			cf.OwnerStack = hist[len(hist)-1].Labels[release.StackLabel]
		}
	}
	return nil
}
