package run

import (
	"context"

	"github.com/convoy-sh/convoy/internal/stack/importer/releases"
)

// ImportRequest says which release records to import.
type ImportRequest struct {
	// Namespace is the namespace whose releases are read; "" reads every
	// namespace (-A).
	Namespace string
	// Stack shapes the stack written (selector, cluster block, repos).
	Stack releases.Options
}

// ImportReleases reads the newest record of every release in the
// namespace (or in all) on the default cluster of o.Clusters, and writes a
// stack from them (releases.Generate). Nothing on the cluster changes.
func ImportReleases(ctx context.Context, o ClusterOptions, req ImportRequest) (*releases.Result, error) {
	cl := connectClusters(o)
	defer cl.Close()
	eng, err := cl.Engine(ctx, nil)
	if err != nil {
		return nil, err
	}
	recs, err := eng.NewestRecords(ctx, req.Namespace)
	if err != nil {
		return nil, err
	}
	return releases.Generate(recs, req.Stack), nil
}
