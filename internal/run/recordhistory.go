package run

import (
	"context"
	"errors"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"k8s.io/client-go/kubernetes"
)

// RecordHistory returns the revisions of the Helm release name in
// namespace, oldest first, read from Helm's record Secrets or ConfigMaps
// (driver) with client (a reader that needs no stack: convoy ui's history
// of a Stack's releases). Records in SQL storage are not read: that needs
// the Stack's connection string, which a reader of the cluster is not
// given (ErrRecordsNotInCluster).
func RecordHistory(ctx context.Context, client kubernetes.Interface, driver release.StorageDriver, namespace, name string) ([]Revision, error) {
	if driver == release.DriverSQL {
		return nil, ErrRecordsNotInCluster
	}
	s := &release.Storage{Driver: release.NewKubeDriver(client, driver, namespace)}
	h, err := s.History(ctx, name)
	if err != nil {
		return nil, err
	}
	revs := make([]Revision, len(h))
	for i, r := range h {
		revs[i] = revisionOf(r)
	}
	return revs, nil
}

// ErrRecordsNotInCluster: the records are in a SQL database, not in the
// cluster's Secrets or ConfigMaps.
var ErrRecordsNotInCluster = errors.New("the records are kept in SQL storage, not in the cluster")
