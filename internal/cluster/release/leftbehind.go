package release

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Records left behind (issue 51): a stack whose storage block moves to
// another driver without `convoy records migrate --to` finds no record of
// its releases in the new driver, and would install each anew over the
// objects of the old revisions, with a history that starts again at 1
// while helm (HELM_DRIVER unset) still sees the old one. A plan that finds
// no record of a release in a driver other than Secrets looks in Helm's
// default storage, the Secrets of the release's namespace, and fails
// naming the release and the command that moves its records (--from
// secret: the storage block names the new driver already).

// RecordsLeftBehindError is a release with no record in the engine's
// driver and records in Helm's default Secret storage.
type RecordsLeftBehindError struct {
	Namespace, Name string
	// Driver is the engine's driver, which holds no record of the
	// release; Secrets is how many of its records Secrets hold.
	Driver  string
	Secrets int
}

func (e *RecordsLeftBehindError) Error() string {
	return fmt.Sprintf("release %s in namespace %s: the stack's records are in %s storage, which holds no record of it, "+
		"but Helm's default storage (Secrets) holds %d: the storage block changed without moving the records, and planning "+
		"would install it anew; move them first with `convoy records migrate --to %s --from secret %s` (docs/storage.md)",
		e.Name, e.Namespace, e.Driver, e.Secrets, e.Driver, e.Name)
}

// RecordsLeftBehind fails with a *RecordsLeftBehindError when the engine's
// driver is not Secrets and the Secrets of namespace hold records of
// release name (owner=helm, name=NAME): call it when the driver holds
// none. Credentials that may not list Secrets there see no record.
func (e *Engine) RecordsLeftBehind(ctx context.Context, namespace, name string) error {
	if e.driver == DriverSecret || e.meta == nil {
		return nil
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	opts := metav1.ListOptions{
		LabelSelector: "owner=helm,name=" + name,
		FieldSelector: "type=" + SecretType,
	}
	n, listed := 0, false
	if e.metadata != nil {
		if l, ok := e.metadata.ListMetadata(ctx, gvr, namespace, opts); ok {
			n, listed = len(l), true
		}
	}
	if !listed {
		var err error
		if n, err = e.countSecretRecords(ctx, gvr, namespace, opts); err != nil {
			return err
		}
	}
	if n == 0 {
		return nil
	}
	return &RecordsLeftBehindError{Namespace: namespace, Name: name, Driver: e.driver.String(), Secrets: n}
}

func (e *Engine) countSecretRecords(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (int, error) {
	list, err := e.meta.Resource(gvr).Namespace(namespace).List(ctx, opts)
	if apierrors.IsForbidden(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("list Helm's release Secrets of %s in namespace %s: %w", opts.LabelSelector, namespace, err)
	}
	return len(list.Items), nil
}
