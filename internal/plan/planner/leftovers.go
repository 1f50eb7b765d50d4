package planner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
)

// leftover is an object a failed revision applied that neither the
// deployed revision nor the next one has.
type leftover struct {
	ref kube.Ref
	// by is the oldest failed revision with it: the one that created it.
	by     int
	status release.Status
}

// leftoverRevisions are the revisions whose objects may be left over on
// the cluster: the failed or interrupted ones newer than the deployed
// revision (an upgrade that failed without atomic, or was interrupted,
// creates objects that the next upgrade, which starts from the deployed
// revision as Helm's does, never deletes), and, when the deployed revision
// is the newest, a failed one right before it (what an atomic upgrade's
// rollback leaves when the rollback kept what the upgrade created, as
// convoy's did before it deleted them, and as a `helm rollback` to an
// older revision does). Only releases planned in full get here: the fast
// path needs the deployed revision newest and proven unchanged, and a
// release whose history has none of these reads nothing more.
func leftoverRevisions(hist []*release.Release, deployed *release.Release) []*release.Release {
	if deployed == nil {
		// The upgrade starts from the newest revision, failed or not: it
		// deletes what that revision has and the next one lacks.
		return nil
	}
	i := slices.Index(hist, deployed)
	if i < 0 {
		return nil
	}
	var out []*release.Release
	for _, r := range hist[i+1:] {
		if unfinished(r) {
			out = append(out, r)
		}
	}
	if i == len(hist)-1 && i > 0 && unfinished(hist[i-1]) {
		out = append(out, hist[i-1])
	}
	return out
}

func unfinished(r *release.Release) bool {
	return r.Info != nil && (r.Info.Status == release.StatusFailed || r.Info.Status.IsPending())
}

// leftovers lists the objects of leftoverRevisions that the release's
// deployed and next revisions (whose identities has says) lack, oldest
// revision first. Whether each exists and still carries the release's
// ownership is the caller's to read.
func (c *computer) leftovers(ctx context.Context, rd *release.Renderer, hist []*release.Release, deployed *release.Release, has func(kube.Ref) bool) ([]leftover, error) {
	revs := leftoverRevisions(hist, deployed)
	slices.SortFunc(revs, func(a, b *release.Release) int { return a.Version - b.Version })
	var out []leftover
	seen := map[string]bool{}
	for _, rec := range revs {
		objs, _, err := c.recordObjects(ctx, rd, rec)
		if err != nil {
			return nil, fmt.Errorf("revision %d of %s: %w", rec.Version, rec.Name, err)
		}
		for _, o := range objs {
			k := identityKey(o.Ref)
			if seen[k] || has(o.Ref) {
				continue
			}
			seen[k] = true
			out = append(out, leftover{ref: o.Ref, by: rec.Version, status: rec.Info.Status})
		}
	}
	return out, nil
}

// leftoverReason says which revisions left the objects rc deletes as
// leftovers ("" when none).
func leftoverReason(rc *plan.ReleaseChange) (plan.Reason, bool) {
	n := 0
	var revs []int
	for _, o := range rc.Objects {
		if o.Action == plan.ObjectDelete && o.LeftBy > 0 {
			n++
			if !slices.Contains(revs, o.LeftBy) {
				revs = append(revs, o.LeftBy)
			}
		}
	}
	if n == 0 {
		return plan.Reason{}, false
	}
	slices.Sort(revs)
	nums := make([]string, len(revs))
	for i, r := range revs {
		nums[i] = fmt.Sprint(r)
	}
	return plan.Reason{Kind: plan.ReasonLeftover, Detail: fmt.Sprintf("%d %s left over by failed %s %s", n, plural(n, "object", "objects"),
		plural(len(revs), "revision", "revisions"), strings.Join(nums, ", "))}, true
}

// LeftoversOf are the objects rc's plan deletes as left over by failed
// revisions (release.Request.Leftovers).
func LeftoversOf(rc *plan.ReleaseChange) []kube.Ref {
	var out []kube.Ref
	for _, o := range rc.Objects {
		if o.Action == plan.ObjectDelete && o.LeftBy > 0 {
			out = append(out, kube.Ref(o.Ref))
		}
	}
	return out
}
