package stack

import (
	"context"
	"errors"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Finalizer holds a deleted Stack until its releases are uninstalled
// (spec.prune) or let go.
const Finalizer = "convoy.dev/finalizer"

// AnnotationForceDelete on a deleted Stack drops the finalizer whatever
// its releases' state: they are left as they are.
const AnnotationForceDelete = "convoy.dev/force-delete"

// Deletion reasons.
const (
	ReasonDeleting       = "Deleting"
	ReasonDeletionFailed = "DeletionFailed"
	ReasonForceDeleted   = "ForceDeleted"
	ReasonPruned         = "Pruned"
	ReasonAbandoned      = "Abandoned"
)

// addFinalizer puts the finalizer on a Stack that lacks it.
func (r *reconciler) addFinalizer(ctx context.Context, st *v1alpha1.Stack) error {
	if controllerutil.ContainsFinalizer(st, Finalizer) {
		return nil
	}
	before := st.DeepCopy()
	controllerutil.AddFinalizer(st, Finalizer)
	if err := r.client.Patch(ctx, st, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("convoy.dev/v1alpha1 Stack %s/%s: add the finalizer %s: %w", st.Namespace, st.Name, Finalizer, err)
	}
	return nil
}

// finalize handles a deleted Stack: its releases are uninstalled
// (spec.prune) or let go, then the finalizer is dropped. A failure keeps
// the finalizer, says which release in Ready=False DeletionFailed, and is
// tried again; the force-delete annotation drops the finalizer anyway.
func (r *reconciler) finalize(ctx context.Context, st *v1alpha1.Stack) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(st, Finalizer) {
		return reconcile.Result{}, nil
	}
	orig := st.DeepCopy()
	out, done := r.cleanUp(ctx, st)
	key := st.Namespace + "/" + st.Name
	if done {
		before := st.DeepCopy()
		controllerutil.RemoveFinalizer(st, Finalizer)
		if err := r.client.Patch(ctx, st, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("convoy.dev/v1alpha1 Stack %s: remove the finalizer %s: %w", key, Finalizer, err)
		}
		r.metrics.setReleases(key, nil)
		r.metrics.reconciles.WithLabelValues(out.result).Inc()
		return reconcile.Result{}, nil
	}
	if err := r.client.Status().Patch(ctx, st, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		out.err = errors.Join(out.err, fmt.Errorf("convoy.dev/v1alpha1 Stack %s status: %w", key, err))
	}
	r.metrics.reconciles.WithLabelValues(out.result).Inc()
	if out.err != nil {
		return reconcile.Result{}, out.err
	}
	return reconcile.Result{RequeueAfter: out.requeue}, nil
}

// cleanUp uninstalls or lets go of the Stack's releases; done says the
// finalizer may go.
func (r *reconciler) cleanUp(ctx context.Context, st *v1alpha1.Stack) (outcome, bool) {
	if v, ok := st.Annotations[AnnotationForceDelete]; ok && v != "false" {
		r.event(st, corev1.EventTypeWarning, ReasonForceDeleted, "Delete",
			fmt.Sprintf("annotation %s: the finalizer is dropped, and the stack's releases are left as they are", AnnotationForceDelete))
		return outcome{result: "deleted"}, true
	}
	if st.Status.Identity == "" && st.Status.LastAppliedPlan == "" && len(st.Status.Releases) == 0 {
		return outcome{result: "deleted"}, true // never planned: nothing to clean up
	}
	if st.Status.Identity != "" {
		first, _, err := r.firstOf(ctx, st, true)
		if err != nil {
			return r.deletionFailed(st, err.Error()), false
		}
		if first != nil {
			return outcome{result: "deleted"}, true // a duplicate never applied anything
		}
	}
	command := fmt.Sprintf("convoy controller (Stack %s/%s deleted)", st.Namespace, st.Name)
	sr, msg := r.openForDeletion(ctx, st)
	if sr == nil {
		if !st.Spec.Prune {
			// The stack cannot be loaded (a namespace deleted with its
			// varsFrom Secrets, a source gone): its identity still says
			// which records to let go, on the default cluster.
			if out, ok := r.abandonByIdentity(ctx, st, command); ok {
				return out, true
			}
		}
		return r.deletionFailed(st, msg), false
	}
	defer sr.close()
	in := sr.in
	var le *stacklock.HeldError
	if !st.Spec.Prune {
		released, err := sr.session.Abandon(ctx, command)
		if errors.As(err, &le) {
			return r.locked(st, "Delete", le), false
		}
		if err != nil {
			return r.deletionFailed(st, "spec.prune is false: the releases were not all let go: "+message(err, nil, in)), false
		}
		if len(released) > 0 {
			r.event(st, corev1.EventTypeNormal, ReasonAbandoned, "Delete",
				fmt.Sprintf("spec.prune is false: %s keep running, managed by no stack", strings.Join(released, ", ")))
		}
		return outcome{result: "deleted"}, true
	}
	if !r.runs.start() {
		return outcome{result: "error", err: errStopping}, false
	}
	res, err := sr.session.Destroy(ctx, run.ApplyRequest{Command: command})
	r.runs.done()
	if errors.As(err, &le) {
		return r.locked(st, "Delete", le), false
	}
	if err == nil && res != nil && res.Failed() {
		err = stepErrors(res)
	}
	if err != nil {
		var p *plan.Plan
		if res != nil {
			p = res.Plan
		}
		return r.deletionFailed(st, "spec.prune is true: uninstall failed: "+message(err, p, in)), false
	}
	var gone []string
	if res != nil {
		for _, o := range res.Releases {
			gone = append(gone, o.Namespace+"/"+o.Name)
		}
	}
	if len(gone) > 0 {
		r.event(st, corev1.EventTypeNormal, ReasonPruned, "Delete", "spec.prune is true: uninstalled "+strings.Join(gone, ", "))
	}
	return outcome{result: "deleted"}, true
}

// openForDeletion opens the deleted Stack as its reconciles do (its
// source pulled and verified, its inputs read, its charts cached); on
// failure it returns nil and why.
func (r *reconciler) openForDeletion(ctx context.Context, st *v1alpha1.Stack) (*stackRun, string) {
	var admErr error
	sr, err := r.openStack(ctx, st, func(reg artifact.Registry) (string, error) {
		adm, err := r.admitSource(ctx, st, reg)
		admErr = err
		return adm.src, err
	})
	var ve *artifact.VerificationError
	var se *sourceError
	switch {
	case errors.As(admErr, &ve):
		return nil, verificationMessage(st, admErr)
	case admErr != nil:
		return nil, admErr.Error()
	case errors.As(err, &se) && se.pull:
		return nil, "spec.source: " + err.Error()
	case err != nil:
		return nil, err.Error()
	}
	if err := sr.open(ctx, true); err != nil {
		msg := message(err, nil, sr.in)
		sr.close()
		return nil, msg
	}
	return sr, ""
}

// abandonByIdentity lets go of the records of a Stack that cannot be
// loaded, by its recorded identity; ok is false when that cannot be done
// either (another cluster, no identity, an error), and the deletion fails
// with the loading error.
func (r *reconciler) abandonByIdentity(ctx context.Context, st *v1alpha1.Stack, command string) (outcome, bool) {
	id, ok := stacklock.ParseIdentity(st.Status.Identity)
	if !ok {
		return outcome{}, false
	}
	o := run.Options{Clusters: run.ClusterOptions{
		Kubeconfig: r.opts.Kubeconfig, Context: r.opts.Context, QPS: r.opts.QPS, Burst: r.opts.Burst, StorageDriver: "secret",
		Impersonate: r.opts.impersonating(st), Namespaces: []string{st.Namespace},
	}}
	released, err := run.OpenGone(o, id).Abandon(ctx, command)
	if err != nil {
		r.event(st, corev1.EventTypeWarning, ReasonDeletionFailed, "Delete", "letting the releases go by the Stack's identity: "+err.Error())
		return outcome{}, false
	}
	if len(released) > 0 {
		r.event(st, corev1.EventTypeNormal, ReasonAbandoned, "Delete",
			fmt.Sprintf("spec.prune is false: %s keep running, managed by no stack (the stack could not be loaded: let go by its identity %s)", strings.Join(released, ", "), st.Status.Identity))
	}
	return outcome{result: "deleted"}, true
}

// deletionFailed records a deletion that could not finish: the Stack keeps
// its finalizer and is tried again.
func (r *reconciler) deletionFailed(st *v1alpha1.Stack, msg string) outcome {
	msg += fmt.Sprintf(" (the Stack keeps its finalizer and is tried again; the annotation %s=true drops it and leaves the releases as they are)", AnnotationForceDelete)
	st.Status.LastError = msg
	retrying(st, ReasonDeletionFailed, msg)
	r.event(st, corev1.EventTypeWarning, ReasonDeletionFailed, "Delete", msg)
	return outcome{result: "error", err: errors.New(msg)}
}
