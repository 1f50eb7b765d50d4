package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/convoy-sh/convoy/internal/apply"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/release"
)

// appliedAttributes gathers what inst's expressions may reference of its
// dependencies once they are applied: from this run's records, else from
// the dependency's deployed revision (a dependency not part of this run).
func appliedAttributes(ctx context.Context, st *config.Stack, inst *config.ReleaseInstance, applied map[string]*release.Release, engines *engines) (map[config.ReleaseInstanceAddr]config.AppliedRelease, error) {
	out := map[config.ReleaseInstanceAddr]config.AppliedRelease{}
	for _, d := range inst.DependsOn {
		dep := st.Release(d.Addr)
		if dep == nil {
			continue
		}
		eng, err := engines.forCluster(ctx, dep.Cluster)
		if err != nil {
			return nil, err
		}
		rel := applied[d.Addr.String()]
		if rel == nil {
			rel, err = eng.Storage(dep.Namespace).Deployed(ctx, dep.Name)
			if errors.Is(err, release.ErrNoDeployed) {
				continue // stays unknown: evaluation reports what it lacks
			}
			if err != nil {
				return nil, err
			}
		}
		a, err := apply.Outputs(ctx, eng, rel)
		if err != nil {
			return nil, fmt.Errorf("outputs of %s: %w", d.Addr, err)
		}
		out[d.Addr] = a
	}
	return out, nil
}
