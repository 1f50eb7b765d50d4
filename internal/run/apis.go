package run

import (
	"cmp"
	"context"
	"errors"

	"github.com/convoy-sh/convoy/internal/apimap"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/release"
)

// forStack is o with the API map its engines read stored revisions with:
// convoy's table of Kubernetes' removals, the stack block's api_map over
// it, --api-map (Options.APIMap) over both.
func (o Options) forStack(st *config.Stack) Options {
	var stack *apimap.Map
	if st != nil {
		stack = st.APIMap
	}
	if stack == nil && o.APIMap == nil {
		return o
	}
	o.Clusters.apis = apimap.Kubernetes().With(stack).With(o.APIMap)
	return o
}

// kubeTarget is the Kubernetes release plans check the objects' API
// versions against: --kube-version, else the stack's kube_version (zero:
// each cluster's own version).
func (o Options) kubeTarget(st *config.Stack) apimap.Version {
	return cmp.Or(o.KubeVersion, st.KubeVersion)
}

// Migration is what `convoy records migrate` changes of a release's
// records (release.Migration): its newest revision's objects whose API
// version the cluster no longer serves.
type Migration struct {
	Instance *config.ReleaseInstance
	*release.Migration
}

// MigrateRequest says which release's records to migrate.
type MigrateRequest struct {
	// Release is an address or a Helm release name.
	Release string
	// Review sees the migration before anything is written (when it
	// changes something); an error cancels it.
	Review func(*Migration) error
}

// ErrNothingToMigrate: the release's newest revision names no API version
// the cluster no longer serves.
var ErrNothingToMigrate = errors.New("nothing to migrate")

// MigrateRecords rewrites the newest record of a release as
// helm-mapkubeapis does (release.Engine.Migrate), holding the stack lock:
// the API versions the cluster no longer serves are replaced by their
// successors in a new revision. It returns the migration and the revision
// written; with nothing to migrate, ErrNothingToMigrate.
func MigrateRecords(ctx context.Context, o Options, req MigrateRequest) (m *Migration, rev *Revision, err error) {
	ls, inst, cl, eng, err := oneRelease(ctx, o, req.Release)
	if err != nil {
		return nil, nil, err
	}
	lock, err := lockStack(ctx, o, ls.Stack, cl, "convoy records migrate")
	if err != nil {
		return nil, nil, err
	}
	defer func() { err = lock.finish(ctx, err) }()
	ctx, stopFence := lock.fence(ctx)
	defer stopFence()
	if err := ownRelease(ctx, o, ls.Stack.ID(), inst, eng, lock, false); err != nil {
		return nil, nil, err
	}
	rm, err := eng.PlanMigration(ctx, inst.Name, inst.Namespace)
	if err != nil {
		return nil, nil, err
	}
	m = &Migration{Instance: inst, Migration: rm}
	if len(rm.Rewrites) == 0 {
		return m, nil, ErrNothingToMigrate
	}
	if req.Review != nil {
		if err := req.Review(m); err != nil {
			return m, nil, err
		}
	}
	rel, err := eng.Migrate(ctx, rm, lock.runID)
	if rel != nil {
		r := revisionOf(rel)
		rev = &r
	}
	return m, rev, err
}
