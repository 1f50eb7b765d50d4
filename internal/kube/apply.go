package kube

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// DryRun says whether an apply is persisted.
type DryRun int

const (
	// DryRunNone applies for real.
	DryRunNone DryRun = iota
	// DryRunServer sends the request with dryRun=All: admission, defaulting
	// and validation run, nothing is stored, and the result is what would be.
	DryRunServer
)

// ApplyOptions configures Apply. The zero value applies for real and fails
// on field-ownership conflicts.
type ApplyOptions struct {
	// Force takes ownership of fields another field manager owns
	// (kubectl's --force-conflicts). Opt-in: a conflict usually means
	// someone else manages the object.
	Force  bool
	DryRun DryRun
}

// Action is what Apply did (or, in a dry run, would do) to one object.
type Action int

const (
	ActionCreated Action = iota + 1
	ActionConfigured
	ActionUnchanged
)

func (a Action) String() string {
	switch a {
	case ActionCreated:
		return "created"
	case ActionConfigured:
		return "configured"
	case ActionUnchanged:
		return "unchanged"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Result is the outcome of applying one object.
type Result struct {
	Ref    Ref
	Action Action
	// Live is the object as the API server stored it (or would store it).
	Live *unstructured.Unstructured
}

// Apply server-side applies objs one after another, in the given order, with
// the client's field manager. It stops at the first failure and returns the
// results of the objects applied before it together with the error, which
// names the failing object. objs are not modified.
func (c *Client) Apply(ctx context.Context, objs []*unstructured.Unstructured, opts ApplyOptions) ([]Result, error) {
	results := make([]Result, 0, len(objs))
	for _, obj := range objs {
		res, err := c.applyOne(ctx, obj, opts)
		if err != nil {
			return results, err
		}
		results = append(results, res)
	}
	return results, nil
}

func (c *Client) applyOne(ctx context.Context, obj *unstructured.Unstructured, opts ApplyOptions) (Result, error) {
	ref := RefOf(obj)
	res, err := c.resourceFor(ref)
	if err != nil {
		return Result{}, err
	}
	before, err := res.Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		before = nil
	case err != nil:
		return Result{}, objectError(ref, err)
	}

	applyOpts := metav1.ApplyOptions{FieldManager: c.fieldManager, Force: opts.Force}
	if opts.DryRun == DryRunServer {
		applyOpts.DryRun = []string{metav1.DryRunAll}
	}
	live, err := res.Apply(ctx, ref.Name, obj, applyOpts)
	if err != nil {
		return Result{}, objectError(ref, err)
	}
	return Result{Ref: ref, Action: actionOf(before, live, opts.DryRun), Live: live}, nil
}

// actionOf compares the object before and after the apply. A real apply
// that changed nothing keeps the resourceVersion (the API server skips
// no-op writes); a dry run never gets a new one, so its result is compared
// field by field, ignoring the bookkeeping a dry run may touch.
func actionOf(before, after *unstructured.Unstructured, dryRun DryRun) Action {
	switch {
	case before == nil:
		return ActionCreated
	case dryRun == DryRunNone && before.GetResourceVersion() == after.GetResourceVersion():
		return ActionUnchanged
	case dryRun == DryRunNone:
		return ActionConfigured
	}
	a, b := before.DeepCopy(), after.DeepCopy()
	for _, u := range []*unstructured.Unstructured{a, b} {
		u.SetManagedFields(nil)
		u.SetResourceVersion("")
	}
	if equality.Semantic.DeepEqual(a.Object, b.Object) {
		return ActionUnchanged
	}
	return ActionConfigured
}

// resourceFor is the dynamic client for ref's kind, namespaced or not as its
// scope says. A namespaced ref without a namespace is an error: applying it
// would silently land in "default".
func (c *Client) resourceFor(ref Ref) (dynamic.ResourceInterface, error) {
	m, err := c.mapping(ref.GroupVersionKind())
	if err != nil {
		return nil, objectError(ref, err)
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return c.dynamic.Resource(m.Resource), nil
	}
	if ref.Namespace == "" {
		return nil, objectErrorf(ref, "namespaced %s has no namespace", ref.Kind)
	}
	return c.dynamic.Resource(m.Resource).Namespace(ref.Namespace), nil
}

// Get reads the live object. A missing object is an error for which
// apierrors.IsNotFound is true.
func (c *Client) Get(ctx context.Context, ref Ref) (*unstructured.Unstructured, error) {
	res, err := c.resourceFor(ref)
	if err != nil {
		return nil, err
	}
	u, err := res.Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, objectError(ref, err)
	}
	return u, nil
}
