package run

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
)

// evaluatePolicies runs the stack's policies against a computed plan and
// stores their results in it, with the overrides asked for.
func evaluatePolicies(ctx context.Context, ls *Loaded, p *plan.Plan, allow []string) error {
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
