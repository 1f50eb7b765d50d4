package kube

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ErrExists is the API server's refusal of a create-only apply
// (ApplyOptions.Create): the object was found absent, but exists now.
var ErrExists = errors.New("exists, although it was absent when checked")

// createOnlyVersion is the resourceVersion a create-only apply carries.
// The API server compares a resourceVersion in an apply patch with the
// stored object's and refuses it (409 Conflict) when they differ; when
// there is no object, it creates one and sets its own. No stored object
// has resourceVersion 1: etcd's first write is revision 2.
const createOnlyVersion = "1"

// createOnly returns obj as a create-only apply sends it.
func createOnly(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	out.SetResourceVersion(createOnlyVersion)
	return out
}

// creates reports whether opts apply ref create-only.
func (o ApplyOptions) creates(ref Ref) bool { return refIn(o.Create, ref) }

// replaces reports whether opts let Apply replace ref.
func (o ApplyOptions) replaces(ref Ref) bool { return refIn(o.Replace, ref) }

// refIn reports whether refs has ref, whatever the API version.
func refIn(refs []Ref, ref Ref) bool {
	for _, r := range refs {
		if r.Group == ref.Group && r.Kind == ref.Kind && r.Namespace == ref.Namespace && r.Name == ref.Name {
			return true
		}
	}
	return false
}

// createdSince turns the Conflict of a create-only apply into ErrExists.
func createdSince(err error) error {
	if apierrors.IsConflict(err) {
		return ErrExists
	}
	return err
}
