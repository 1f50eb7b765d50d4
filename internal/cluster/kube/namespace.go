package kube

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EnsureNamespace creates the namespace with labels when it does not exist
// (Helm's --create-namespace). An existing namespace is left as it is, labels
// included: it may belong to someone else. One that is being deleted is an
// error, since nothing could be created in it.
//
// A namespace the client found or created once is taken to exist for the
// rest of its life (a run): releases sharing a namespace check it once.
// Should it be deleted meanwhile, the objects' applies fail naming it, and
// the client forgets it (Apply), so that the next EnsureNamespace asks the
// API server again. Calls for one namespace take turns: the releases of a
// new namespace installed at once wait for the first to create it instead
// of each reading it and being refused its create.
func (c *Client) EnsureNamespace(ctx context.Context, name string, labels map[string]string) error {
	if _, ok := c.namespaces.Load(name); ok {
		return nil
	}
	done, err := c.namespaceTurn(ctx, name)
	if err != nil {
		return err
	}
	defer done()
	exists, known := c.knownNamespace(name)
	if exists {
		return nil // found or created by the call before
	}
	ref := Ref{Version: "v1", Kind: "Namespace", Name: name}
	if !known {
		ns, err := c.typed.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return c.found(ref, ns)
		}
		if apierrors.IsForbidden(err) {
			// Credentials confined to namespaces (a Stack's service
			// account) may use one they may not read: taken to exist, as
			// by CheckNamespace.
			c.namespaces.Store(name, struct{}{})
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return objectError(ref, err)
		}
	}
	// Absent, just read or found so by CheckNamespace within Recent:
	// created without reading it (again).
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: maps.Clone(labels)}}
	_, err = c.typed.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: c.fieldManager})
	c.absentNamespaces.Delete(name)
	if apierrors.IsAlreadyExists(err) {
		// Created since: by a run of its own (the outcome asked for), or
		// long ago and being deleted, which a read tells.
		ns, err := c.typed.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return objectError(ref, err)
		}
		return c.found(ref, ns)
	}
	if err != nil {
		return objectError(ref, fmt.Errorf("create: %w", err))
	}
	c.namespaces.Store(name, struct{}{})
	return nil
}

// found keeps ns, read from the API server, as existing, unless it is
// being deleted: nothing could be created in it.
func (c *Client) found(ref Ref, ns *corev1.Namespace) error {
	if ns.Status.Phase == corev1.NamespaceTerminating {
		return objectErrorf(ref, "namespace is terminating")
	}
	c.namespaces.Store(ref.Name, struct{}{})
	return nil
}

// namespaceTurn waits for the turn of the calls about namespace name
// (EnsureNamespace, CheckNamespace) and returns the function that ends it.
func (c *Client) namespaceTurn(ctx context.Context, name string) (done func(), err error) {
	t, ok := c.namespaceTurns.Load(name)
	if !ok {
		t, _ = c.namespaceTurns.LoadOrStore(name, make(chan struct{}, 1))
	}
	turn := t.(chan struct{})
	select {
	case turn <- struct{}{}:
		return func() { <-turn }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
