package run

import (
	"cmp"
	"context"
	"errors"

	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// forStack is o with the API map its engines read stored revisions with:
// convoy's table of Kubernetes' removals, the stack block's api_map over
// it, --api-map (Options.APIMap) over both.
func (o Options) forStack(st *config.Stack) Options {
	var stack *apimap.Map
	if st != nil {
		stack = st.APIMap
		o.Clusters.storage = st.Storage
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
func (s *Session) MigrateRecords(ctx context.Context, req MigrateRequest) (m *Migration, rev *Revision, err error) {
	_, err = s.onOwnRelease(ctx, req.Release, "convoy records migrate", false, func(ctx context.Context, r ownedRelease) error {
		rm, err := r.eng.PlanMigration(ctx, r.inst.Name, r.inst.Namespace)
		if err != nil {
			return err
		}
		m = &Migration{Instance: r.inst, Migration: rm}
		if len(rm.Rewrites) == 0 {
			return ErrNothingToMigrate
		}
		if req.Review != nil {
			if err := req.Review(m); err != nil {
				return err
			}
		}
		rel, err := r.eng.Migrate(ctx, rm, r.runID)
		if rel != nil {
			rr := revisionOf(rel)
			rev = &rr
		}
		return err
	})
	return m, rev, err
}
