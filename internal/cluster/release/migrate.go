package release

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/apimap"
)

// MigrateDescription is the description of a revision Migrate writes,
// helm-mapkubeapis' own: rolling back from it restores the removed APIs.
const MigrateDescription = "Kubernetes deprecated API upgrade - DO NOT rollback from this version"

// Migration is what Migrate would write: the newest revision's manifest
// with the API versions the cluster no longer serves replaced by their
// successors, and the objects of kinds without one dropped.
type Migration struct {
	Name, Namespace string
	// Revision is the newest revision, which the migration supersedes;
	// the new one is Revision+1.
	Revision int
	// Rewrites are the objects it changes, in manifest order; none:
	// nothing to migrate.
	Rewrites []apimap.Rewrite
	manifest string
}

// PlanMigration reads the newest revision of a release and works out its
// migration (nothing is written). As helm-mapkubeapis, it migrates only
// the newest revision, which must be deployed.
func (e *Engine) PlanMigration(ctx context.Context, name, namespace string) (*Migration, error) {
	last, err := e.Storage(namespace).Last(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("release %s (namespace %s): %w", name, namespace, err)
	}
	if last.Info.Status != StatusDeployed {
		return nil, fmt.Errorf("release %s (namespace %s): the newest revision %d is %s: only a deployed revision is migrated (as helm-mapkubeapis does)", name, namespace, last.Version, last.Info.Status)
	}
	manifest, rewrites := e.APIs().Migrate(last.Manifest, e.servedAPIs())
	return &Migration{Name: name, Namespace: namespace, Revision: last.Version, Rewrites: rewrites, manifest: manifest}, nil
}

// Migrate writes m as helm-mapkubeapis does: the newest revision becomes
// superseded and a copy of it, with the migrated manifest, is the new
// deployed revision (MigrateDescription). Nothing on the cluster but the
// records changes. It fails when the release has a newer revision than
// m's. The new record is returned.
func (e *Engine) Migrate(ctx context.Context, m *Migration, runID string) (*Release, error) {
	if len(m.Rewrites) == 0 {
		return nil, errors.New("nothing to migrate")
	}
	store := e.Storage(m.Namespace)
	last, err := store.Last(ctx, m.Name)
	if err != nil {
		return nil, err
	}
	if last.Version != m.Revision || last.Info.Status != StatusDeployed {
		return nil, fmt.Errorf("release %s (namespace %s) changed since its migration was planned: revision %d is %s now", m.Name, m.Namespace, last.Version, last.Info.Status)
	}
	next := *last
	info := *last.Info
	next.Info = &info
	next.Version = last.Version + 1
	next.Manifest = m.manifest
	next.Info.Status, next.Info.Description, next.Info.LastDeployed = StatusDeployed, MigrateDescription, time.Now()
	next.Labels = withRun(maps.Clone(last.Labels), runID)
	// What the records said of what convoy rendered and applied was said
	// of the old manifest: the next plan renders it in full.
	delete(next.Labels, FingerprintLabel)
	delete(next.Labels, AppliedLabel)
	next.Annotations = maps.Clone(last.Annotations)
	delete(next.Annotations, ObjectsAnnotation)
	next.resourceVersion, next.createdAt = "", ""
	e.setRecordObjects(&next)
	if err := e.createRecord(ctx, store, &next); err != nil {
		return nil, err
	}
	if err := e.writeFinal(ctx, store, last, StatusSuperseded, last.Info.Description); err != nil {
		return &next, err
	}
	return &next, nil
}
