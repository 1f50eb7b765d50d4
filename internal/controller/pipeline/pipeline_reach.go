package pipeline

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// A Pipeline's reach: the Stacks of other namespaces it pins, as its own
// identity. By the tenancy rule a Stack acts only as its own identity;
// so does a Pipeline. Its service account (spec.serviceAccountName, else
// --default-service-account) reads and patches the Stacks of other
// namespaces, after a SubjectAccessReview for patch on each, so that a
// refusal is clean and names the verb, the resource, the namespace and
// the identity. Stacks of the Pipeline's own namespace are read and
// patched by the controller as before (who may create a Pipeline there
// may edit its Stacks with convoy-editor), except under --tenancy strict,
// where every object acts as its own identity: there the service account
// reaches its own namespace's Stacks too.

// pipelineStacksIndex indexes the Pipelines in the cache by the Stacks
// their stages name (namespace/name), so that a Stack's change wakes the
// Pipelines of any namespace that name it.
const pipelineStacksIndex = "convoy.dev/pipeline-stacks"

// IndexStacks registers pipelineStacksIndex with the manager's cache.
func IndexStacks(ctx context.Context, mgr manager.Manager) error {
	return mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.Pipeline{}, pipelineStacksIndex, func(o client.Object) []string {
		p := o.(*v1alpha1.Pipeline)
		var keys []string
		for _, stage := range p.Spec.Stages {
			for _, ref := range stage.Stacks {
				if ref.Invalid() == "" {
					keys = append(keys, ref.In(p.Namespace).String())
				}
			}
			if ref := stage.StackSet; ref != nil && ref.Invalid() == "" {
				keys = append(keys, stackSetKey(ref.In(p.Namespace).String()))
			}
		}
		return keys
	})
}

// pipelinesNaming are the Pipelines in the cache whose stages name the
// Stack.
func (r *Reconciler) pipelinesNaming(ctx context.Context, stack types.NamespacedName) ([]v1alpha1.Pipeline, error) {
	var l v1alpha1.PipelineList
	if err := r.client.List(ctx, &l, client.MatchingFields{pipelineStacksIndex: stack.String()}); err != nil {
		return nil, fmt.Errorf("list the Pipelines naming Stack %s: %w", stack, err)
	}
	return l.Items, nil
}

// pipelineExists says whether the Pipeline a Stack's annotation names
// exists: one of ns from same (read uncached), another from the cache.
// An error reading it counts as existing: the Stack is not taken over.
func (r *Reconciler) pipelineExists(ctx context.Context, owner types.NamespacedName, ns string, same []v1alpha1.Pipeline) bool {
	if owner.Namespace == ns {
		for _, q := range same {
			if q.Name == owner.Name {
				return true
			}
		}
		return false
	}
	var q v1alpha1.Pipeline
	return !apierrors.IsNotFound(r.client.Get(ctx, owner, &q))
}

// pipelineServiceAccount is the service account a Pipeline acts as, of
// its own namespace ("": none).
func (o Options) pipelineServiceAccount(p *v1alpha1.Pipeline) string {
	if p.Spec.ServiceAccountName != "" {
		return p.Spec.ServiceAccountName
	}
	return o.DefaultServiceAccount
}

// pipelineUser is the user name a Pipeline's requests impersonate
// (system:serviceaccount:NS:NAME), "" for none.
func (o Options) pipelineUser(p *v1alpha1.Pipeline) string {
	if sa := o.pipelineServiceAccount(p); sa != "" {
		return "system:serviceaccount:" + p.Namespace + ":" + sa
	}
	return ""
}

// reachesAs says whether the Pipeline reads and patches the Stacks of
// namespace ns as its service account: those of other namespaces always
// (reachProblems refuses them without one), its own under --tenancy
// strict.
func (r *Reconciler) reachesAs(p *v1alpha1.Pipeline, ns string) bool {
	if r.opts.pipelineUser(p) == "" {
		return false
	}
	return ns != p.Namespace || r.opts.Strict
}

// reachProblems are the stage entries naming Stacks of other namespaces
// that the Pipeline may not name at all: under --no-cross-namespace-refs
// (--tenancy strict), or without a service account to reach them as.
func (r *Reconciler) reachProblems(p *v1alpha1.Pipeline) []string {
	var out []string
	for i, stage := range p.Spec.Stages {
		for k, ref := range stage.Stacks {
			nn := ref.In(p.Namespace)
			if ref.Invalid() != "" || nn.Namespace == p.Namespace {
				continue
			}
			where := fmt.Sprintf("spec.stages[%d].stacks[%d]", i, k)
			switch {
			case r.opts.NoCrossNamespaceRefs:
				out = append(out, fmt.Sprintf("%s.namespace: %s: the controller refuses references to namespaces other than the Pipeline's own (%s; --no-cross-namespace-refs)",
					where, nn.Namespace, p.Namespace))
			case r.opts.pipelineUser(p) == "":
				out = append(out, fmt.Sprintf("%s: Stack %s is of another namespace: a Pipeline reaches other namespaces only as a service account of its own (set spec.serviceAccountName, or run the controller with --default-service-account)",
					where, nn))
			}
		}
	}
	return out
}

// clientAs is a client impersonating the Pipeline's service account.
func (r *Reconciler) clientAs(p *v1alpha1.Pipeline) (client.Client, error) {
	user := r.opts.pipelineUser(p)
	if user == "" {
		return r.client, nil
	}
	return r.stacks.ClientAs(user)
}

// readStackAs reads a Stack as the Pipeline's service account, uncached:
// nil when it does not exist, refusal when the identity may not read it.
func (r *Reconciler) readStackAs(ctx context.Context, p *v1alpha1.Pipeline, nn types.NamespacedName) (st *v1alpha1.Stack, refusal string, err error) {
	c, err := r.clientAs(p)
	if err != nil {
		return nil, "", err
	}
	var got v1alpha1.Stack
	switch err := c.Get(ctx, nn, &got); {
	case err == nil:
		return &got, "", nil
	case apierrors.IsNotFound(err):
		return nil, "", nil
	case apierrors.IsForbidden(err):
		return nil, stacksForbidden(r.opts.pipelineUser(p), "get", nn.Namespace), nil
	default:
		return nil, "", fmt.Errorf("convoy.dev/v1alpha1 Stack %s: %w", nn, err)
	}
}

// mayPatch asks the API server's authorizer (a SubjectAccessReview, as
// the controller) whether the Pipeline's service account may patch the
// Stack: refusal says who may not do what when it may not.
func (r *Reconciler) mayPatch(ctx context.Context, p *v1alpha1.Pipeline, nn types.NamespacedName) (refusal string, err error) {
	return r.mayPatchResource(ctx, p, "stacks", "Stack", nn)
}

// mayPatchResource asks whether the Pipeline's service account may patch
// the object of resource (of convoy.dev; kind names it in errors).
func (r *Reconciler) mayPatchResource(ctx context.Context, p *v1alpha1.Pipeline, resource, kind string, nn types.NamespacedName) (refusal string, err error) {
	user := r.opts.pipelineUser(p)
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user,
		// The groups the API server gives an impersonated service
		// account: bindings to them count.
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + p.Namespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: nn.Namespace, Verb: "patch", Group: v1alpha1.GroupVersion.Group, Resource: resource, Name: nn.Name,
		},
	}}
	if err := r.client.Create(ctx, sar); err != nil {
		return "", fmt.Errorf("authorization.k8s.io/v1 SubjectAccessReview of patch on %s %s for %s: %w", kind, nn, kube.DescribeUser(user), err)
	}
	if sar.Status.Allowed {
		return "", nil
	}
	return resourceForbidden(user, "patch", resource, nn.Namespace), nil
}

// stacksForbidden is the refusal of verb on stacks.convoy.dev in ns to
// user: "serviceaccount delivery/promoter may not patch
// stacks.convoy.dev in namespace team-a-prod".
func stacksForbidden(user, verb, ns string) string {
	return resourceForbidden(user, verb, "stacks", ns)
}

// resourceForbidden is the refusal of verb on resource (of convoy.dev)
// in ns to user.
func resourceForbidden(user, verb, resource, ns string) string {
	return (&kube.ForbiddenError{User: user, Verb: verb, Resource: resource + "." + v1alpha1.GroupVersion.Group, Namespace: ns}).Error()
}

// refusalOf is the refusal the Pipeline's status recorded last ("":
// none): its Stalled condition's message when the reason is Forbidden.
func refusalOf(p *v1alpha1.Pipeline) string {
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.CondStalled); c != nil && c.Status == metav1.ConditionTrue && c.Reason == v1alpha1.ReasonForbidden {
		return c.Message
	}
	return ""
}

// refuse records Stacks the Pipeline's identity may not pin: Ready=False
// and Stalled=True, reason Forbidden, until a Role allows it (looked at
// again each interval); the event is sent when the message is not the
// one recorded before (prev).
func (r *Reconciler) refuse(p *v1alpha1.Pipeline, prev, msg string) {
	if msg != prev {
		r.event(p, corev1.EventTypeWarning, v1alpha1.ReasonForbidden, "Promote", msg)
	}
	setPipelineCond(p, v1alpha1.CondReady, metav1.ConditionFalse, v1alpha1.ReasonForbidden, msg)
	setPipelineCond(p, v1alpha1.CondStalled, metav1.ConditionTrue, v1alpha1.ReasonForbidden, msg)
	meta.RemoveStatusCondition(&p.Status.Conditions, v1alpha1.CondReconciling)
}
