package kube

import (
	"context"
	"encoding/json"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ClaimResize is a PersistentVolumeClaim to grow to Storage.
type ClaimResize struct {
	Ref     Ref
	Storage string
}

// ResizeClaims sets each claim's spec.resources.requests.storage (a merge
// patch, as `kubectl patch pvc`): the API server accepts it only for a
// bound claim whose StorageClass allows volume expansion, and the volume's
// driver then grows it. It goes on past failures and returns them joined,
// one per claim.
func (c *Client) ResizeClaims(ctx context.Context, claims []ClaimResize) error {
	var errs []error
	for _, cl := range claims {
		res, ref, err := c.resourceFor(cl.Ref)
		if err != nil {
			errs = append(errs, objectError(cl.Ref, err))
			continue
		}
		patch, err := json.Marshal(map[string]any{"spec": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": cl.Storage}}}})
		if err != nil {
			return err
		}
		if _, err := res.Patch(ctx, ref.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: c.fieldManager}); err != nil {
			errs = append(errs, objectErrorf(ref, "resize to %s: %w", cl.Storage, err))
		}
	}
	return errors.Join(errs...)
}
