package planner

import (
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
)

// valueOrigins says where each values leaf of a release rendered at plan
// time was set (rc.ValueOrigins). What provenance cannot work out leaves
// them unset: it explains a plan, it never fails one (the render reports
// what is wrong with the values).
func (c *computer) valueOrigins(rc *plan.ReleaseChange, r *resolve.Release) {
	if c.in.Stack == nil {
		return
	}
	if m, err := c.origins.Values(c.in.Stack, r.Instance, r.Chart); err == nil {
		rc.ValueOrigins = m
	}
}
