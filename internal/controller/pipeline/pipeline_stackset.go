package pipeline

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A stage's StackSet (spec.stages[].stackSet) is pinned as a Stack is,
// one level up: its template's source is set to REPOSITORY@DIGEST (and
// the convoy.dev/pipeline annotation names the Pipeline); the StackSet
// then rolls the digest out over its Stacks by its own strategy, and
// says how far it got in status.rollout. For the stage machine it is one
// more target: Ready once its rollout of the digest is done on every
// step, failed once the rollout halted on it (or the StackSet stalled).
//
// Only a StackSet of the Pipeline's own namespace: a StackSet's rollout
// acts as its namespace's identities (its Stacks' service account), so a
// Pipeline of another namespace pinning it would act across tenants. It
// is read and patched as a Stack of the Pipeline's namespace is: by the
// controller, or under --tenancy strict as the Pipeline's service
// account after a SubjectAccessReview for patch on stacksets.

// stackSetRefusals are the stages naming a StackSet of another namespace
// than the Pipeline's: Forbidden, whatever the identity.
func stackSetRefusals(p *v1alpha1.Pipeline) []string {
	var out []string
	for i, stage := range p.Spec.Stages {
		ref := stage.StackSet
		if ref == nil || ref.Invalid() != "" {
			continue
		}
		if nn := ref.In(p.Namespace); nn.Namespace != p.Namespace {
			out = append(out, fmt.Sprintf("convoy.dev/v1alpha1 StackSet %s (spec.stages[%d].stackSet): a Pipeline promotes only StackSets of its own namespace (%s): the StackSet's rollout acts as the identities of namespace %s; nothing is promoted",
				nn, i, p.Namespace, nn.Namespace))
		}
	}
	return out
}

// readStackSet reads a stage's StackSet, uncached: as the Pipeline's
// service account under --tenancy strict, else as the controller. nil
// when it does not exist; refusal when the identity may not read it.
func (r *Reconciler) readStackSet(ctx context.Context, p *v1alpha1.Pipeline, nn types.NamespacedName) (ss *v1alpha1.StackSet, refusal string, err error) {
	var c client.Reader = r.reader
	if r.reachesAs(p, nn.Namespace) {
		if c, err = r.clientAs(p); err != nil {
			return nil, "", err
		}
	}
	var got v1alpha1.StackSet
	switch err := c.Get(ctx, nn, &got); {
	case err == nil:
		return &got, "", nil
	case apierrors.IsNotFound(err):
		return nil, "", nil
	case apierrors.IsForbidden(err):
		return nil, resourceForbidden(r.opts.pipelineUser(p), "get", "stacksets", nn.Namespace), nil
	default:
		return nil, "", fmt.Errorf("convoy.dev/v1alpha1 StackSet %s: %w", nn, err)
	}
}

// stackSetsOf reads the stages' StackSets into read, keyed by
// stackSetKey; what is missing, in an older Pipeline or has a source of
// its own is added to the lists that stall the Pipeline.
func (r *Reconciler) stackSetsOf(ctx context.Context, p *v1alpha1.Pipeline, same []v1alpha1.Pipeline, read *stacksRead, missing, conflicts, foreign *[]string) error {
	pkey := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	for i, stage := range p.Spec.Stages {
		ref := stage.StackSet
		if ref == nil {
			continue
		}
		nn := ref.In(p.Namespace)
		key := stackSetKey(nn.Name)
		ss, refusal, err := r.readStackSet(ctx, p, nn)
		if err != nil {
			return err
		}
		if refusal != "" {
			read.Refused[key] = refusal
			continue
		}
		if ss == nil {
			*missing = append(*missing, fmt.Sprintf("convoy.dev/v1alpha1 StackSet %s (spec.stages[%d].stackSet)", nn, i))
			continue
		}
		read.StackSets[key] = ss
		other, err := r.olderPipelineNaming(ctx, p, same, stackSetKey(nn.String()), func(q *v1alpha1.Pipeline) bool { return namesStackSet(q, nn) })
		if err != nil {
			return err
		}
		if other != "" {
			*conflicts = append(*conflicts, fmt.Sprintf("%s is in Pipeline %s, created earlier", key, other))
			continue
		}
		owner, owned := ownerOfStackSet(ss)
		switch src := ss.Spec.Template.Spec.Source; {
		case src == "" || owned && owner == pkey:
		case !owned:
			*foreign = append(*foreign, fmt.Sprintf("%s has a spec.template.spec.source of its own (%s)", key, src))
		case r.pipelineExists(ctx, owner, p.Namespace, same):
			*foreign = append(*foreign, fmt.Sprintf("%s is pinned by Pipeline %s (%s)", key, owner, src))
		}
	}
	return nil
}

// ownerOfStackSet is the Pipeline the StackSet's convoy.dev/pipeline
// annotation names (of the StackSet's namespace).
func ownerOfStackSet(ss *v1alpha1.StackSet) (types.NamespacedName, bool) {
	v := ss.Annotations[v1alpha1.PipelineAnnotation]
	if v == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ss.Namespace, Name: v}, true
}

// namesStackSet says whether a stage of q names the StackSet.
func namesStackSet(q *v1alpha1.Pipeline, nn types.NamespacedName) bool {
	for _, stage := range q.Spec.Stages {
		if ref := stage.StackSet; ref != nil && ref.Invalid() == "" && ref.In(q.Namespace) == nn {
			return true
		}
	}
	return false
}

// viewStackSet is what the stage machine needs of a StackSet: the digest
// its template's source is pinned to, Ready when its rollout of that
// digest is done (every Stack Ready on it, every step verified), Failed
// when the rollout halted on it or the StackSet stalls.
func viewStackSet(ss *v1alpha1.StackSet) stackView {
	var v stackView
	if ref, err := artifact.ParseRef(ss.Spec.Template.Spec.Source); err == nil {
		v.Pinned = ref.Digest
	}
	if ss.Status.ObservedGeneration != ss.Generation {
		v.NotReady = "its current generation is not reconciled yet"
		return v
	}
	if sc := meta.FindStatusCondition(ss.Status.Conditions, v1alpha1.CondStalled); sc != nil && sc.Status == metav1.ConditionTrue {
		if v.Pinned != "" {
			v.Failed = fmt.Sprintf("Stalled %s: %s", sc.Reason, sc.Message)
		}
		v.NotReady = fmt.Sprintf("Stalled %s: %s", sc.Reason, sc.Message)
		return v
	}
	ro := ss.Status.Rollout
	switch {
	case v.Pinned == "":
		v.NotReady = "its template has no source digest"
	case ro == nil || ro.Digest != v.Pinned:
		v.NotReady = "its rollout of " + v.Pinned + " has not started"
	case ro.Phase == v1alpha1.RolloutDone:
		v.Ready = true
	case ro.Phase == v1alpha1.RolloutHalted:
		v.Failed = "its rollout halted: " + ro.Message
		v.NotReady = v.Failed
	default:
		v.NotReady = "rolling out: " + ro.Message
	}
	return v
}

// pinStackSet sets the StackSet's template source to the repository at
// digest and records the Pipeline as its owner; under --tenancy strict
// as the Pipeline's service account, once a SubjectAccessReview said it
// may patch the StackSet (refusal says why not).
func (r *Reconciler) pinStackSet(ctx context.Context, p *v1alpha1.Pipeline, ss *v1alpha1.StackSet, digest string) (refusal string, err error) {
	repo, err := artifact.ParseRepository(p.Spec.Source)
	if err != nil {
		return "", err
	}
	c := client.Writer(r.client)
	nn := types.NamespacedName{Namespace: ss.Namespace, Name: ss.Name}
	if r.reachesAs(p, ss.Namespace) {
		if refusal, err := r.mayPatchResource(ctx, p, "stacksets", "StackSet", nn); refusal != "" || err != nil {
			return refusal, err
		}
		if c, err = r.clientAs(p); err != nil {
			return "", err
		}
	}
	before := ss.DeepCopy()
	ss.Spec.Template.Spec.Source = repo.WithDigest(digest).String()
	if ss.Annotations == nil {
		ss.Annotations = map[string]string{}
	}
	ss.Annotations[v1alpha1.PipelineAnnotation] = p.Name
	if err := c.Patch(ctx, ss, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return "", fmt.Errorf("convoy.dev/v1alpha1 StackSet %s: pin to %s: %w", nn, digest, err)
	}
	r.event(p, corev1.EventTypeNormal, "Pinned", "Promote", fmt.Sprintf("StackSet %s pinned to %s", ss.Name, digest))
	return "", nil
}

// PipelinesOfStackSet maps a StackSet to the Pipelines whose stages name
// it (the cache's pipelineStacksIndex): its rollout's progress is their
// input.
func (r *Reconciler) PipelinesOfStackSet(ctx context.Context, obj client.Object) []reconcile.Request {
	var l v1alpha1.PipelineList
	key := stackSetKey(types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}.String())
	if err := r.client.List(ctx, &l, client.MatchingFields{pipelineStacksIndex: key}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(l.Items))
	for _, p := range l.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
	}
	return out
}
