package run

import (
	"context"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"k8s.io/client-go/kubernetes"
)

// RecordHistory returns the revisions of the Helm release name in
// namespace, oldest first, read from Helm's record Secrets with client (a
// reader that needs no stack: convoy ui's history of a Stack's releases).
func RecordHistory(ctx context.Context, client kubernetes.Interface, namespace, name string) ([]Revision, error) {
	s := &release.Storage{Driver: release.NewKubeDriver(client, release.DriverSecret, namespace)}
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
