package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Ref identifies one object. Namespace is empty for cluster-scoped objects.
type Ref struct {
	Group, Version, Kind string
	Namespace, Name      string
}

// RefOf returns the identity of u.
func RefOf(u *unstructured.Unstructured) Ref {
	gvk := u.GroupVersionKind()
	return Ref{
		Group:     gvk.Group,
		Version:   gvk.Version,
		Kind:      gvk.Kind,
		Namespace: u.GetNamespace(),
		Name:      u.GetName(),
	}
}

// GroupVersionKind of the object.
func (r Ref) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// APIVersion as written in manifests: "apps/v1", "v1".
func (r Ref) APIVersion() string {
	return r.GroupVersionKind().GroupVersion().String()
}

// String is the identity used in every message about the object:
// "apps/v1 Deployment ns/name", "rbac.authorization.k8s.io/v1 ClusterRole name".
func (r Ref) String() string {
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + r.Name
	}
	return r.APIVersion() + " " + r.Kind + " " + name
}

// ObjectError is an error about one object. It unwraps to the cause, so
// apierrors.IsNotFound and friends see through it.
type ObjectError struct {
	Ref Ref
	Err error
}

func (e *ObjectError) Error() string { return e.Ref.String() + ": " + e.Err.Error() }
func (e *ObjectError) Unwrap() error { return e.Err }

func objectError(ref Ref, err error) error {
	if err == nil {
		return nil
	}
	return &ObjectError{Ref: ref, Err: Forbidden(err)}
}

func objectErrorf(ref Ref, format string, args ...any) error {
	return &ObjectError{Ref: ref, Err: fmt.Errorf(format, args...)}
}
