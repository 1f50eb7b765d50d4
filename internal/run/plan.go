package run

import (
	"context"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/convoy-sh/convoy/internal/resolve"
)

// PlanRequest says what to plan.
type PlanRequest struct {
	// Targets limit the plan to these release addresses (plus their
	// dependencies with IncludeDeps).
	Targets []string
	// Selectors (-l tier=api,env!=dev) add the releases whose labels they
	// match to the targets.
	Selectors   []string
	IncludeDeps bool
	// Destroy plans the uninstall of every release of the stack.
	Destroy bool
}

// Planned is a computed plan with the stack it was computed from.
type Planned struct {
	Loaded *Loaded
	Plan   *plan.Plan
}

// Plan loads the stack and computes its plan. It changes nothing.
func Plan(ctx context.Context, o Options, req PlanRequest) (*Planned, error) {
	ls, err := Load(ctx, o.Source, Ordered)
	if err != nil {
		return nil, err
	}
	p, err := computePlan(ctx, o, ls, NewClusters(o.Clusters), req)
	if err != nil {
		return nil, err
	}
	return &Planned{Loaded: ls, Plan: p}, nil
}

// computePlan plans a loaded stack on connected clusters.
func computePlan(ctx context.Context, o Options, ls *Loaded, cl *Clusters, req PlanRequest) (*plan.Plan, error) {
	st := ls.Stack
	targets, diags := st.Selection(req.Targets, req.Selectors)
	if err := diagError(diags, ls.Config); err != nil {
		return nil, err
	}
	if _, err := cl.Stack(ctx, st); err != nil {
		return nil, err
	}
	hash, err := ls.ConfigHash()
	if err != nil {
		return nil, err
	}
	return plan.Compute(ctx, plan.Input{
		Stack:       st,
		Order:       ls.Order,
		Engine:      cl.Engine,
		Charts:      o.charts(),
		Targets:     targets,
		Selectors:   req.Selectors,
		IncludeDeps: req.IncludeDeps,
		Parallelism: o.parallelism(),
		ConfigHash:  hash,
		Destroy:     req.Destroy,
		Request: func(r *resolve.Release) *release.Request {
			return ReleaseRequest(st.ID(), r)
		},
		Outputs: func(ctx context.Context, inst *config.ReleaseInstance) (map[config.ReleaseInstanceAddr]config.AppliedRelease, error) {
			return appliedAttributes(ctx, st, inst, nil, cl)
		},
	})
}
