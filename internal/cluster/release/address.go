package release

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// AddressLabel is the address of the release instance in its stack
// (addrs.ReleaseInstance.LabelValue) when convoy wrote the record: moved
// and removed blocks name releases by address, and the records say which
// release was at an address once its block is gone.
const AddressLabel = "convoy.dev/address"

// Disown takes the stack's label (StackLabel) off every record of the
// release that carries it: the stack no longer manages the release, and
// another stack, or helm, may take it over. It writes no revision; the
// records are otherwise unchanged.
func (e *Engine) Disown(ctx context.Context, namespace, name, stack string) error {
	if e.sql != nil {
		return e.sqlDisown(ctx, namespace, name, stack)
	}
	gvr, fields := e.recordResource()
	records := e.meta.Resource(gvr).Namespace(namespace)
	sel := labels.SelectorFromSet(map[string]string{"owner": "helm", "name": name, StackLabel: stack}).String()
	list, err := records.List(ctx, metav1.ListOptions{LabelSelector: sel, FieldSelector: fields})
	if err != nil {
		return fmt.Errorf("list the records of release %s: %w", name, kube.Forbidden(err))
	}
	for _, r := range list.Items {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"labels":          map[string]any{StackLabel: nil, AddressLabel: nil, LetGoLabel: stack},
			"resourceVersion": r.ResourceVersion,
		}})
		if err != nil {
			return err
		}
		if _, err := records.Patch(ctx, r.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: RecordFieldManager}); err != nil {
			return fmt.Errorf("unlabel the record %s of release %s: %w", r.Name, name, kube.Forbidden(err))
		}
	}
	return nil
}

// RecordedAt reports whether a revision of hist was written at the address
// whose AddressLabel value is at. helm rollback copies the labels of the
// revision it rolls back to, so a newest record naming an older address
// may follow one written at the new address: that move was recorded.
func RecordedAt(hist []*Release, at string) bool {
	for _, r := range hist {
		if r.Labels[AddressLabel] == at {
			return true
		}
	}
	return false
}
