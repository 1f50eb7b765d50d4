package release

import (
	"context"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// ownedLeftovers returns those of refs that exist and carry the release's
// ownership annotations, without those whose live object is annotated
// helm.sh/resource-policy: keep: what a failed revision created that
// the release may delete. An object never created (a quota refused it),
// deleted since, or taken over by another owner is left alone; Helm's
// rollback reads each object before deleting it and skips a kept one
// just the same.
func (e *Engine) ownedLeftovers(ctx context.Context, name, namespace string, refs []kube.Ref) ([]kube.Ref, error) {
	var out []kube.Ref
	for _, ref := range refs {
		live, err := e.kube.Get(ctx, ref)
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			continue // gone, or its kind is
		}
		if err != nil {
			return nil, err
		}
		a := live.GetAnnotations()
		if a[annoReleaseName] != name || a[annoReleaseNamespace] != namespace || a[annoResourcePolicy] == "keep" {
			continue
		}
		out = append(out, ref)
	}
	return out, nil
}
