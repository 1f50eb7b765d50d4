package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// deployedOutputs evaluates a release whose values read attributes of
// other releases (revision, status, resources) with what its dependencies
// have deployed now, as a plan does for dependencies it leaves unchanged:
// their newest deployed records and their live objects. A release whose
// values stay unknown gets an error naming the dependencies that are not
// deployed, or the cluster that could not be read.
func deployedOutputs(ctx context.Context, ls *Loaded, cl func() *Clusters, r *config.ReleaseInstance) (*config.ReleaseInstance, error) {
	if r.Known {
		return r, nil
	}
	applied := map[config.ReleaseInstanceAddr]config.AppliedRelease{}
	var missing []string
	for _, d := range r.DependsOn {
		dep := ls.Stack.Release(d.Addr)
		if dep == nil {
			continue
		}
		eng, err := cl().Engine(ctx, dep.Cluster)
		if err != nil {
			return nil, fmt.Errorf("values read outputs of %s, and its cluster could not be read: %w", d.Addr, err)
		}
		rel, err := eng.Storage(dep.Namespace).Deployed(ctx, dep.Name)
		if errors.Is(err, release.ErrNoDeployed) {
			missing = append(missing, fmt.Sprintf("%s (no deployed revision of release %q in namespace %q)", d.Addr, dep.Name, dep.Namespace))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("values read outputs of %s: %w", d.Addr, err)
		}
		a, err := outputsOf(ctx, eng, rel)
		if err != nil {
			return nil, fmt.Errorf("outputs of %s: %w", d.Addr, err)
		}
		applied[d.Addr] = a
	}
	known, diags := ls.Stack.EvaluateRelease(r.Addr, applied)
	if err := diagError(diags, ls.Config); err != nil {
		return nil, err
	}
	if !known.Known {
		if len(missing) > 0 {
			return nil, fmt.Errorf("values read outputs of releases that are not deployed: %s; apply them first (convoy apply), or render with the dependency deployed", strings.Join(missing, ", "))
		}
		return nil, fmt.Errorf("values depend on attributes known only after apply: %w", config.ErrUnknownValue)
	}
	return known, nil
}

// lazyClusters connects to the clusters once, on first use: render is
// offline for releases that read no outputs.
func lazyClusters(o Options) func() *Clusters {
	return sync.OnceValue(func() *Clusters { return o.newClusters(nil) })
}
