package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ValidationNamespace is where an object whose own namespace does not exist
// yet is validated: it always exists. The API server refuses any request in
// a missing namespace before it validates the object, dry runs included.
const ValidationNamespace = "default"

// DryRunCreate asks the API server to create obj without persisting it
// (dryRun=All): admission, defaulting and validation run. An object that
// exists already passed them (the server checks for it last), so that is
// no error. The same request accepted within Recent is not sent again.
func (c *Client) DryRunCreate(ctx context.Context, obj *unstructured.Unstructured) error {
	res, ref, err := c.resourceFor(RefOf(obj))
	if err != nil {
		return err
	}
	key, keyed := c.validationKeyOf("create", false, obj)
	if keyed && c.validatedRecently(key) {
		return nil // this very request was accepted within Recent
	}
	_, err = res.Create(ctx, obj, metav1.CreateOptions{FieldManager: c.fieldManager, DryRun: []string{metav1.DryRunAll}})
	if err == nil || apierrors.IsAlreadyExists(err) {
		if keyed {
			c.remember(key)
		}
		return nil
	}
	return objectError(ref, err)
}

// DryRunCreateIn is DryRunCreate of obj placed in namespace ns instead of
// its own, which does not exist yet. Admission that depends on the
// namespace (quotas, pod security, webhooks with namespace selectors) sees
// ns. Errors name obj as it is, with a note where it was validated.
func (c *Client) DryRunCreateIn(ctx context.Context, obj *unstructured.Unstructured, ns string) error {
	moved := obj.DeepCopy()
	moved.SetNamespace(ns)
	err := c.DryRunCreate(ctx, moved)
	if err == nil {
		return nil
	}
	var oe *ObjectError
	if errors.As(err, &oe) {
		err = oe.Err
	}
	return objectError(RefOf(obj), fmt.Errorf("%w (validated in namespace %q: namespace %q does not exist yet)", err, ns, obj.GetNamespace()))
}

// IsNamespaceNotFound reports whether err is the API server's refusal of a
// request in a namespace that does not exist, and which one.
func IsNamespaceNotFound(err error) (string, bool) {
	var se apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &se) {
		return "", false
	}
	d := se.Status().Details
	if d == nil || d.Kind != "namespaces" || d.Group != "" {
		return "", false
	}
	return d.Name, true
}

// NamespaceObject is a Namespace named name, as create_namespace creates it.
func NamespaceObject(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Namespace")
	u.SetName(name)
	return u
}

// ValidateNamespace dry-run creates namespace name when it does not exist
// (create_namespace): a name the API server would refuse fails before
// anything is created. An existing namespace is not checked: creating it
// may be forbidden to whoever only uses it.
func (c *Client) ValidateNamespace(ctx context.Context, name string) error {
	_, err := c.CheckNamespace(ctx, name)
	return err
}

// CheckNamespace is ValidateNamespace that also tells whether the
// namespace exists: objects in one that does not are validated by a dry-run
// create in ValidationNamespace right away (DryRunCreateIn), without the dry
// run in their own namespace that the API server would refuse.
//
// What the client learns is kept: a namespace found (or created) for the
// client's life, as EnsureNamespace keeps it; one found absent and
// validated for Recent, so that the releases of a new namespace, and the
// apply right after a plan, check it once. Calls for one namespace take
// turns with each other and with EnsureNamespace.
func (c *Client) CheckNamespace(ctx context.Context, name string) (exists bool, err error) {
	if exists, known := c.knownNamespace(name); known {
		return exists, nil
	}
	done, err := c.namespaceTurn(ctx, name)
	if err != nil {
		return false, err
	}
	defer done()
	if exists, known := c.knownNamespace(name); known {
		return exists, nil // learnt by the call before
	}
	ns := NamespaceObject(name)
	live, err := c.Get(ctx, RefOf(ns))
	switch {
	case err == nil:
		if phase, _, _ := unstructured.NestedString(live.Object, "status", "phase"); phase != string(corev1.NamespaceTerminating) {
			c.namespaces.Store(name, struct{}{}) // as EnsureNamespace keeps it
		}
		return true, nil
	case apierrors.IsForbidden(err):
		// Credentials confined to namespaces (a Stack's service account)
		// may not read Namespaces, but may use theirs: taken to exist.
		// Were it absent, the objects' dry runs in it name it.
		c.namespaces.Store(name, struct{}{})
		return true, nil
	case !apierrors.IsNotFound(err):
		return false, err
	}
	if err := c.DryRunCreate(ctx, ns); err != nil {
		return false, err
	}
	c.absentNamespaces.Store(name, time.Now())
	return false, nil
}

// knownNamespace is what the client learnt of namespace name: found or
// created (exists), or found absent and validated within Recent.
func (c *Client) knownNamespace(name string) (exists, known bool) {
	if _, ok := c.namespaces.Load(name); ok {
		return true, true // found or created by this client (EnsureNamespace)
	}
	if at, ok := c.absentNamespaces.Load(name); ok && time.Since(at.(time.Time)) < Recent {
		return false, true
	}
	return false, false
}
