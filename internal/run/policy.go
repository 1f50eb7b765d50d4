package run

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
	"github.com/convoy-sh/convoy/internal/plan/policy"
	"github.com/convoy-sh/convoy/internal/sensitive"
)

// evaluatePolicies runs the stack's policies against a computed plan and
// stores their results in it, with the overrides asked for.
func evaluatePolicies(ctx context.Context, ls *Loaded, p *plan.Plan, allow []string) error {
	noteAtApply(ls, p)
	res, err := ls.Policies.Evaluate(ctx, p)
	if err != nil {
		return err
	}
	p.PolicyResults = res
	p.Allow(allow)
	return nil
}

// checkAllowed refuses an override of a policy the stack does not have: a
// typo must not pass for an override.
func checkAllowed(ls *Loaded, allow []string) error {
	names := ls.Policies.Names()
	for _, a := range allow {
		if !slices.Contains(names, a) {
			known := "it has none"
			if len(names) > 0 {
				known = "its policies: " + strings.Join(names, ", ")
			}
			return fmt.Errorf("--allow-policy %s: the stack has no policy %q (%s)", a, a, known)
		}
	}
	return nil
}

// noteAtApply marks the releases the plan could not render (rendersAtApply)
// as checked by the policies when apply renders them, if any policy reads
// releases or objects (a refused release is not applied at all).
func noteAtApply(ls *Loaded, p *plan.Plan) {
	if !ls.Policies.ReadsReleases() {
		return
	}
	for _, rc := range p.Releases {
		if rendersAtApply(rc) && !rc.Refused() {
			rc.PoliciesAtApply = true
		}
	}
}

// rendersAtApply reports whether apply renders rc when its step starts:
// a deploy whose values were known only after apply, or that the plan
// holds no rendering of.
func rendersAtApply(rc *plan.ReleaseChange) bool {
	switch rc.Action {
	case plan.ActionInstall, plan.ActionUpgrade:
		return rc.KnownAfterApply || rc.Saved == nil
	}
	return false
}

// checkAtApply evaluates the policies over releases and objects on rc as
// apply has just rendered it (prep), before anything of it is applied. A
// denial the plan's overrides (--allow-policy, plan.Plan.AllowedPolicies)
// do not allow is a *plan.ReleasePolicyError; the other violations are
// announced.
func checkAtApply(ctx context.Context, o Options, set *policy.Set, p *plan.Plan, rc *plan.ReleaseChange, eng *release.Engine, prep *release.Prepared, red *sensitive.Redactor) error {
	if !set.ReadsReleases() {
		return nil
	}
	res, err := set.EvaluateRelease(ctx, p, planner.AtApply(eng.Renderer, rc, prep, red), red)
	if err != nil {
		return err
	}
	var denials []plan.PolicyResult
	var denied, allowed []string
	for _, r := range res {
		if r.Level == plan.PolicyDeny && slices.Contains(p.AllowedPolicies, r.Policy) {
			r.Level, r.Allowed = plan.PolicyWarn, true
			allowed = append(allowed, r.Policy)
		}
		if r.Level == plan.PolicyDeny {
			denials = append(denials, r)
			denied = append(denied, r.Policy)
			continue
		}
		o.announce("policy at apply: " + r.String())
	}
	if len(denials) == 0 {
		notePolicies(prep, allowed)
		return nil
	}
	slices.Sort(denied)
	return &plan.ReleasePolicyError{Release: rc.Addr.String(), Policies: slices.Compact(denied), Denials: denials}
}

// notePolicies adds to the description of the revision prep records the
// policies allowed on what apply rendered, unless the plan's note for the
// release (recordNote) already names them.
func notePolicies(prep *release.Prepared, allowed []string) {
	if len(allowed) == 0 || prep.Request == nil {
		return
	}
	slices.Sort(allowed)
	note := "policies allowed: " + strings.Join(slices.Compact(allowed), ", ")
	switch {
	case strings.Contains(prep.Request.Note, note):
	case prep.Request.Note == "":
		prep.Request.Note = note
	default:
		prep.Request.Note += "; " + note
	}
}
