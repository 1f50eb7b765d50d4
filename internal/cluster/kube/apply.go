package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
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
	// Ignore leaves fields to other managers: they are applied only when
	// the object is created (see IgnoreRule and Client.leave).
	Ignore IgnoreRules
	// Live, with LiveKnown, is the object as the caller last read it (nil:
	// absent). A dry run then does not read it again: a plan holds every
	// live object from one list per kind and namespace, and the GET before
	// each dry-run PATCH was half its requests. Real applies always read.
	// Such a dry run's Result has no Action: plans compare the objects.
	Live      *unstructured.Unstructured
	LiveKnown bool
	// Unread makes a dry run read the live object only when it needs it:
	// for the object's ignore rules or its replacement (Replace). Such a
	// dry run's Result has no Action; validation before an apply wants
	// only the server's verdict, and a first install's GET per object
	// before its dry run was a tenth of its requests. Nor is such a dry
	// run sent when this client's dry run accepted the very same request
	// within Recent (the plan's, before the apply's validation): its
	// Result then has no Live either.
	Unread bool
	// Replace are the objects Apply replaces when the API server refuses
	// to change their immutable fields (IsImmutable): those a plan showed
	// as replaced. Others fail.
	Replace []Ref
	// Create are objects the caller found absent (a plan's list, an
	// ownership check): a real apply neither reads them first nor takes
	// them over. Their apply carries a precondition the API server meets
	// only by creating the object; one that exists by then fails with
	// ErrExists (naming it), so that its owner can be checked.
	Create []Ref
}

// Action is what Apply did (or, in a dry run, would do) to one object.
type Action int

const (
	ActionCreated Action = iota + 1
	ActionConfigured
	ActionUnchanged
	// ActionReplaced: deleted and created again (ApplyOptions.Replace).
	ActionReplaced
)

func (a Action) String() string {
	switch a {
	case ActionCreated:
		return "created"
	case ActionConfigured:
		return "configured"
	case ActionUnchanged:
		return "unchanged"
	case ActionReplaced:
		return "replaced"
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
	res, ref, err := c.resourceFor(RefOf(obj))
	if err != nil {
		return Result{}, err
	}
	var before *unstructured.Unstructured
	unread := opts.DryRun != DryRunNone && opts.Unread && len(opts.Ignore.For(ref)) == 0 && !opts.replaces(ref)
	create := opts.DryRun == DryRunNone && opts.creates(ref)
	switch {
	case opts.DryRun != DryRunNone && opts.LiveKnown:
		before = opts.Live
	case unread, create:
	default:
		err = c.read(ctx, res, ref, opts, &before)
	}
	if err != nil {
		return Result{}, objectError(ref, err)
	}
	rendered := obj
	obj = c.leave(obj, before, opts.Ignore.For(ref))
	if create {
		obj = createOnly(obj)
	}

	applyOpts := metav1.ApplyOptions{FieldManager: c.fieldManager, Force: opts.Force}
	var key validationKey
	keyed := false
	if opts.DryRun == DryRunServer {
		applyOpts.DryRun = []string{metav1.DryRunAll}
		key, keyed = c.validationKeyOf("apply", opts.Force, obj)
		if keyed && unread && c.validatedRecently(key) {
			// Validation only, and this very request was accepted within
			// Recent (the plan's dry run): not sent again.
			return Result{Ref: ref}, nil
		}
	}
	live, err := res.Apply(ctx, ref.Name, obj, applyOpts)
	switch {
	case err == nil && keyed:
		c.remember(key)
	case err == nil && opts.DryRun == DryRunNone:
		c.wrote(ref)
	}
	if create {
		err = createdSince(err)
	}
	if err != nil && before != nil && IsImmutable(err) && opts.replaces(ref) {
		return c.replace(ctx, rendered, before, ref, opts)
	}
	if err != nil {
		if ns, ok := IsNamespaceNotFound(err); ok {
			c.namespaces.Delete(ns) // deleted since: EnsureNamespace asks again
		}
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			c.namespaces.Delete(ref.Namespace) // being deleted: asked again, and refused
		}
		return Result{}, objectError(ref, err)
	}
	if opts.DryRun != DryRunNone && (opts.LiveKnown || unread) {
		return Result{Ref: ref, Live: live}, nil // a plan compares the objects itself; validation needs none
	}
	return Result{Ref: ref, Action: actionOf(before, live, c.fieldManager), Live: live}, nil
}

// read reads the object before an apply; a real apply first moves the
// fields of the managers it inherits from (inherit.go) to its own.
func (c *Client) read(ctx context.Context, res dynamic.ResourceInterface, ref Ref, opts ApplyOptions, before **unstructured.Unstructured) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var err error
		*before, err = res.Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			*before = nil
			return nil
		case err != nil || opts.DryRun != DryRunNone:
			return err
		}
		*before, err = c.inherit(ctx, res, *before)
		return err
	})
}

// actionOf tells whether the apply changed the object. Comparing whole
// objects cannot tell: controllers write to them (status, the Deployment
// revision annotation) between our read and our apply, and a dry run keeps
// the resourceVersion. What this apply can change is exactly the fields the
// field manager owns, so those are compared: the set of them, and their
// values before and after.
func actionOf(before, after *unstructured.Unstructured, manager string) Action {
	if before == nil {
		return ActionCreated
	}
	fieldsBefore, fieldsAfter := ownedFields(before, manager), ownedFields(after, manager)
	if fieldsAfter == nil || !equality.Semantic.DeepEqual(fieldsBefore, fieldsAfter) {
		return ActionConfigured
	}
	if !equality.Semantic.DeepEqual(pick(before.Object, fieldsAfter), pick(after.Object, fieldsAfter)) {
		return ActionConfigured
	}
	return ActionUnchanged
}

// ownedFields is the field set (managedFields' fieldsV1) that manager owns
// by apply on the main resource, or nil.
func ownedFields(u *unstructured.Unstructured, manager string) map[string]any {
	for _, mf := range u.GetManagedFields() {
		if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if json.Unmarshal(mf.FieldsV1.Raw, &fields) != nil {
			return nil
		}
		return fields
	}
	return nil
}

// pick returns the parts of value that fields (a fieldsV1 set) name, keyed as
// in the set: "f:name" for map fields, "k:{...}", "v:..." and "i:n" for list
// elements. A field without children is taken whole.
func pick(value any, fields map[string]any) any {
	if len(fields) == 0 {
		return value
	}
	out := make(map[string]any, len(fields))
	for key, sub := range fields {
		if key == "." {
			continue
		}
		child, ok := member(value, key)
		if !ok {
			out[key] = absent{}
			continue
		}
		subFields, _ := sub.(map[string]any)
		out[key] = pick(child, subFields)
	}
	return out
}

// absent marks a named field that is not in the object.
type absent struct{}

// member finds one field-set key in value.
func member(value any, key string) (any, bool) {
	if m, ok := value.(map[string]any); ok {
		prefix, arg, _ := strings.Cut(key, ":")
		v, found := m[arg]
		return v, found && prefix == "f"
	}
	list, _ := value.([]any)
	i, ok := memberIndex(list, key)
	if !ok {
		return nil, false
	}
	return list[i], true
}

// memberIndex finds the list element a field-set key names: "i:n" by
// index, "k:{...}" by its key fields, "v:..." by value.
func memberIndex(list []any, key string) (int, bool) {
	prefix, arg, ok := strings.Cut(key, ":")
	if !ok {
		return 0, false
	}
	switch prefix {
	case "i":
		i, err := strconv.Atoi(arg)
		if err != nil || i < 0 || i >= len(list) {
			return 0, false
		}
		return i, true
	case "k":
		var keys map[string]any
		if json.Unmarshal([]byte(arg), &keys) != nil {
			return 0, false
		}
		for i, item := range list {
			m, _ := item.(map[string]any)
			if m != nil && matchKeys(m, keys) {
				return i, true
			}
		}
	case "v":
		for i, item := range list {
			if sameJSON(item, json.RawMessage(arg)) {
				return i, true
			}
		}
	}
	return 0, false
}

func matchKeys(item, keys map[string]any) bool {
	for k, want := range keys {
		if !sameJSON(item[k], want) {
			return false
		}
	}
	return true
}

// sameJSON compares values as JSON: field sets decode 80 as float64, objects
// hold int64.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// resourceFor is the dynamic client for ref's kind, namespaced or not as its
// scope says, and ref without a namespace if the kind has none. A namespaced
// ref without a namespace is an error: applying it would silently land in
// "default".
func (c *Client) resourceFor(ref Ref) (dynamic.ResourceInterface, Ref, error) {
	m, err := c.mapping(ref.GroupVersionKind())
	if err != nil {
		return nil, ref, objectError(ref, err)
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		ref.Namespace = ""
		return c.dynamic.Resource(m.Resource), ref, nil
	}
	if ref.Namespace == "" {
		return nil, ref, objectErrorf(ref, "namespaced %s has no namespace", ref.Kind)
	}
	return c.dynamic.Resource(m.Resource).Namespace(ref.Namespace), ref, nil
}

// Get reads the live object. A missing object is an error for which
// apierrors.IsNotFound is true.
func (c *Client) Get(ctx context.Context, ref Ref) (*unstructured.Unstructured, error) {
	res, ref, err := c.resourceFor(ref)
	if err != nil {
		return nil, err
	}
	u, err := res.Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, objectError(ref, err)
	}
	return u, nil
}
