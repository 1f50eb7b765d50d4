package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// Propagation is how the garbage collector treats an object's dependents.
type Propagation int

const (
	// PropagationBackground deletes the object now and its dependents
	// afterwards (Helm's default for uninstall).
	PropagationBackground Propagation = iota
	// PropagationForeground keeps the object, with a deletionTimestamp,
	// until its dependents are gone.
	PropagationForeground
	// PropagationOrphan leaves the dependents behind.
	PropagationOrphan
)

func (p Propagation) String() string {
	switch p {
	case PropagationBackground:
		return "background"
	case PropagationForeground:
		return "foreground"
	case PropagationOrphan:
		return "orphan"
	}
	return fmt.Sprintf("Propagation(%d)", int(p))
}

func (p Propagation) policy() (metav1.DeletionPropagation, error) {
	switch p {
	case PropagationBackground:
		return metav1.DeletePropagationBackground, nil
	case PropagationForeground:
		return metav1.DeletePropagationForeground, nil
	case PropagationOrphan:
		return metav1.DeletePropagationOrphan, nil
	}
	return "", fmt.Errorf("kube: unknown propagation %d", int(p))
}

// DeleteOptions configures Delete. The zero value deletes in the background
// and does not wait.
type DeleteOptions struct {
	Propagation Propagation
	// Wait blocks until the deleted objects are gone (see WaitForDelete).
	Wait bool
}

// Delete deletes refs in order and returns those it deleted; objects already
// gone, or whose kind no longer exists, are skipped without error. It goes on past failures, so that as much
// as possible is removed, and returns them joined, one per object. With
// opts.Wait it then waits until the deleted objects are gone.
func (c *Client) Delete(ctx context.Context, refs []Ref, opts DeleteOptions) ([]Ref, error) {
	policy, err := opts.Propagation.policy()
	if err != nil {
		return nil, err
	}
	var deleted []Ref
	var errs []error
	for _, ref := range refs {
		res, ref, err := c.resourceFor(ref)
		if meta.IsNoMatchError(err) {
			continue // its CRD is gone, and with it every object of the kind
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		err = res.Delete(ctx, ref.Name, metav1.DeleteOptions{PropagationPolicy: &policy})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs = append(errs, objectError(ref, err))
		default:
			c.wrote(ref)
			deleted = append(deleted, ref)
		}
	}
	if len(errs) > 0 {
		return deleted, errors.Join(errs...)
	}
	if opts.Wait {
		return deleted, c.WaitForDelete(ctx, deleted)
	}
	return deleted, nil
}

// WaitForDelete blocks until none of refs exists, watching each, or returns
// a *NotReadyError listing those still there when ctx ends (with their
// finalizers: the usual reason an object outlives its deletion).
//
// Once the API server has been unreachable for longer than the client's
// Reach bound, it stops with an *UnreachableError naming the objects not
// seen gone.
func (c *Client) WaitForDelete(ctx context.Context, refs []Ref) error {
	refs = uniqueRefs(refs)
	remaining := make([]*unstructured.Unstructured, len(refs))
	errs := make([]error, len(refs))
	gone := make([]bool, len(refs))
	wctx, unreachable := c.whileReachable(ctx)
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Go(func() {
			remaining[i], errs[i] = c.waitGone(wctx, ref)
			gone[i] = remaining[i] == nil && errs[i] == nil
		})
	}
	wg.Wait()
	if ue := unreachable(); ue != nil {
		for i, ref := range refs {
			if !gone[i] {
				ue.Stopped = append(ue.Stopped, ref)
			}
		}
		return ue
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var objs []ObjectStatus
	for i, ref := range refs {
		if u := remaining[i]; u != nil {
			objs = append(objs, ObjectStatus{Ref: ref, State: StateNotDeleted, Message: deletionState(u)})
		}
	}
	if len(objs) == 0 {
		return nil
	}
	return &NotReadyError{Objects: objs, Cause: ctx.Err()}
}

// waitGone watches one object until it is deleted. It returns the object as
// last seen if ctx ended first, nil once it is gone.
func (c *Client) waitGone(ctx context.Context, ref Ref) (*unstructured.Unstructured, error) {
	res, ref, err := c.resourceFor(ref)
	if meta.IsNoMatchError(err) {
		return nil, nil // the kind is gone, so is the object
	}
	if err != nil {
		return nil, err
	}
	byName := fields.OneTermEqualSelector("metadata.name", ref.Name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = byName
			return res.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = byName
			return res.Watch(ctx, o)
		},
	}
	var last *unstructured.Unstructured
	absent := func(store cache.Store) (bool, error) {
		items := store.List()
		if len(items) == 0 {
			return true, nil
		}
		last, _ = items[0].(*unstructured.Unstructured)
		return false, nil
	}
	deleted := func(e watch.Event) (bool, error) {
		if u, ok := e.Object.(*unstructured.Unstructured); ok {
			last = u
		}
		return e.Type == watch.Deleted, nil
	}
	_, err = watchtools.UntilWithSync(ctx, lw, &unstructured.Unstructured{}, absent, deleted)
	switch {
	case err == nil:
		return nil, nil
	case ctx.Err() != nil:
		if last == nil {
			last = &unstructured.Unstructured{}
		}
		return last, nil
	}
	return nil, objectError(ref, fmt.Errorf("waiting for deletion: %w", err))
}

func deletionState(u *unstructured.Unstructured) string {
	var parts []string
	if u.GetDeletionTimestamp() == nil {
		parts = append(parts, "not being deleted")
	} else {
		parts = append(parts, "deletion pending")
	}
	if f := u.GetFinalizers(); len(f) > 0 {
		parts = append(parts, "finalizers: "+strings.Join(f, ", "))
	}
	return strings.Join(parts, ", ")
}
