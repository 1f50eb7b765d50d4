package stack

import (
	"cmp"
	"context"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ReasonDuplicateStack: another Stack, created earlier, reconciles the
// same stack.
const ReasonDuplicateStack = "DuplicateStack"

// unreconciledGrace is how long a newer Stack waits for an older one that
// the controller has not looked at yet to record its identity: two Stacks
// created together are told apart by age, not by which is reconciled first.
const unreconciledGrace = time.Minute

// checkDuplicate records the Stack's identity (status.identity: the
// stack's name and environment, its namespace when the Stack acts as a
// service account of it (identityNamespace), and the clusters it uses,
// what its lock is keyed by) and stalls it when an older Stack has the same one: only the
// first Stack of a stack ever plans or applies. The identity is written
// before the others are read, both uncached, so that of two Stacks
// reconciled at once at least the younger sees the older.
func (r *reconciler) checkDuplicate(ctx context.Context, sr *stackRun) (outcome, bool) {
	st := sr.st
	id, err := r.identity(ctx, sr)
	if err != nil {
		// The plan reports what is wrong with the stack.
		return outcome{}, false
	}
	// The uncached list, when the answer may change: the identity is new
	// (a new Stack, a new source), or the Stack is a duplicate (the first
	// may be of another shard, not in the cache). Otherwise the cache is
	// enough: a Stack created later never makes this one a duplicate.
	fresh := st.Status.Identity != id.String()
	if c := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.CondStalled); c != nil && c.Reason == ReasonDuplicateStack {
		fresh = true
	}
	if st.Status.Identity != id.String() {
		// A copy: the patch's response must not undo what this reconcile
		// recorded so far.
		before := st.DeepCopy()
		patched := st.DeepCopy()
		patched.Status.Identity = id.String()
		st.Status.Identity = id.String()
		if err := r.client.Status().Patch(ctx, patched, client.MergeFrom(before)); err != nil {
			retrying(st, v1alpha1.ReasonPlanFailed, fmt.Sprintf("record status.identity: %v", err))
			return outcome{result: "error", err: err}, true
		}
	}
	first, waitFor, err := r.firstOf(ctx, st, fresh)
	if err != nil {
		retrying(st, v1alpha1.ReasonPlanFailed, err.Error())
		return outcome{result: "error", err: err}, true
	}
	switch {
	case first != nil:
		msg := fmt.Sprintf("stack %q is reconciled by Stack %s/%s, created earlier: this Stack never plans or applies while that one exists (delete one of them)",
			id.Stack, first.Namespace, first.Name)
		if len(id.Clusters) > 0 {
			msg = fmt.Sprintf("stack %q on %s is reconciled by Stack %s/%s, created earlier: this Stack never plans or applies while that one exists (delete one of them)",
				id.Stack, joinAnd(clusterStrings(id)), first.Namespace, first.Name)
		}
		return r.stall(st, ReasonDuplicateStack, msg), true
	case waitFor != nil:
		msg := fmt.Sprintf("waiting for Stack %s/%s, created earlier and not reconciled yet, to say which stack it reconciles", waitFor.Namespace, waitFor.Name)
		setCond(st, v1alpha1.CondReconciling, metav1.ConditionTrue, v1alpha1.ReasonWaiting, msg)
		return outcome{result: "waiting", requeue: 2 * time.Second}, true
	}
	return outcome{}, false
}

// identity is the stack's identity: the recorded one while the inputs
// (source digest, environment, kubeconfigs) are those of the last plan,
// which was made with it; else loaded afresh.
func (r *reconciler) identity(ctx context.Context, sr *stackRun) (stacklock.Identity, error) {
	st := sr.st
	if p := st.Status.Plan; p != nil && p.Inputs == sr.in.hash {
		if id, ok := stacklock.ParseIdentity(st.Status.Identity); ok {
			return id, nil
		}
	}
	return sr.session.Identity(ctx)
}

// firstOf returns the Stack, created before st, with st's identity (nil:
// st is the first), or else an older Stack not reconciled yet, whose
// identity is not known. fresh lists every Stack from the API server;
// otherwise the cache (this controller's shard) is read.
func (r *reconciler) firstOf(ctx context.Context, st *v1alpha1.Stack, fresh bool) (first, waitFor *v1alpha1.Stack, err error) {
	var l v1alpha1.StackList
	var opts []client.ListOption
	if r.opts.Namespace != "" {
		opts = append(opts, client.InNamespace(r.opts.Namespace))
	}
	if err := r.client.List(ctx, &l, opts...); err != nil {
		return nil, nil, fmt.Errorf("list convoy.dev/v1alpha1 Stacks: %w", err)
	}
	items := l.Items
	if fresh {
		same, err := r.sameIdentityUncached(ctx, st, opts)
		if err != nil {
			return nil, nil, err
		}
		// The cache (this shard's Stacks) says which older ones have no
		// identity yet; the uncached list which of every shard's have
		// st's.
		items = append(items, same...)
	}
	mine, err := shardSelector(r.opts.Shard)
	if err != nil {
		return nil, nil, err
	}
	// An identity scoped to the Stack's namespace is never another
	// namespace's: this Stack neither waits for nor names their Stacks.
	own, _ := stacklock.ParseIdentity(st.Status.Identity)
	scoped := own.Namespace != ""
	for i := range items {
		o := &items[i]
		if o.UID == st.UID || !olderThan(o, st) {
			continue
		}
		switch {
		case o.Status.Identity == st.Status.Identity:
			if first == nil || olderThan(o, first) {
				first = o
			}
		case o.Status.Identity == "" && o.Status.ObservedGeneration == 0 && o.DeletionTimestamp.IsZero() &&
			(!scoped || o.Namespace == st.Namespace) &&
			!o.Spec.Suspend && time.Since(o.CreationTimestamp.Time) < unreconciledGrace && mine.Matches(labels.Set(o.Labels)) &&
			sourceRepository(o.Spec.Source) == sourceRepository(st.Spec.Source):
			// Only a Stack of this controller's shard (another shard's may
			// have no controller running) pulled from the same repository
			// (other tags of one stack, most likely: a fleet of Stacks
			// created at once does not wait in a chain).
			waitFor = o
		}
	}
	return first, waitFor, nil
}

// sameIdentityUncached lists, from the API server, the Stacks of every
// shard whose status.identity is st's: with a field selector
// (status.identity is a selectable field of the CRD), so that a fleet of
// new Stacks does not each read every Stack (at 1,000, their JSON was a
// fifth of the API server's work). An API server or CRD without the
// selectable field refuses the selector: then every Stack is listed.
func (r *reconciler) sameIdentityUncached(ctx context.Context, st *v1alpha1.Stack, opts []client.ListOption) ([]v1alpha1.Stack, error) {
	var l v1alpha1.StackList
	selected := append(slices.Clone(opts), client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("status.identity", st.Status.Identity)})
	err := r.reader.List(ctx, &l, selected...)
	if apierrors.IsBadRequest(err) {
		l = v1alpha1.StackList{}
		err = r.reader.List(ctx, &l, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("list convoy.dev/v1alpha1 Stacks: %w", err)
	}
	return l.Items, nil
}

// sourceRepository is an oci:// source without its tag or digest.
func sourceRepository(src string) string {
	src, _, _ = strings.Cut(src, "@")
	if i := strings.LastIndex(src, ":"); i > strings.LastIndex(src, "/") {
		src = src[:i]
	}
	return src
}

// olderThan orders Stacks by creation, then by namespace and name.
func olderThan(a, b *v1alpha1.Stack) bool {
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c < 0
	}
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name)) < 0
}

func clusterStrings(id stacklock.Identity) []string {
	out := make([]string, len(id.Clusters))
	for i, c := range id.Clusters {
		out[i] = string(c)
	}
	return out
}

func joinAnd(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// sameIdentity maps a deleted Stack to the Stacks with its identity: a
// duplicate takes over when the first is gone.
func (r *reconciler) sameIdentity(ctx context.Context, obj client.Object) []reconcile.Request {
	gone, ok := obj.(*v1alpha1.Stack)
	if !ok || gone.Status.Identity == "" {
		return nil
	}
	var l v1alpha1.StackList
	if err := r.client.List(ctx, &l); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, o := range l.Items {
		if o.UID != gone.UID && o.Status.Identity == gone.Status.Identity {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}})
		}
	}
	return out
}
