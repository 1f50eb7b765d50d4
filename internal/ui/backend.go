package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/controller/planstore"
	"github.com/convoy-sh/convoy/internal/run"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Backend is what the pages read and do, as the user the UI runs as: the
// cluster's RBAC decides what each request may see or change.
type Backend interface {
	// Stacks lists the Stacks of namespace ("": every namespace the user
	// may list them in).
	Stacks(ctx context.Context, namespace string) ([]v1alpha1.Stack, error)
	Stack(ctx context.Context, namespace, name string) (*v1alpha1.Stack, error)
	// Plan is the Stack's current plan, decoded (nil when the user may not
	// read it: then text is the plan's masked text, if readable).
	Plan(ctx context.Context, st *v1alpha1.Stack) (p *planPage, text string, err error)
	Events(ctx context.Context, kind, namespace, name string) ([]corev1.Event, error)
	// History reads a release's Helm records kept by driver (secret,
	// configmap: a Stack's spec.storage).
	History(ctx context.Context, driver release.StorageDriver, namespace, release string) ([]run.Revision, error)
	Pipelines(ctx context.Context, namespace string) ([]v1alpha1.Pipeline, error)
	Pipeline(ctx context.Context, namespace, name string) (*v1alpha1.Pipeline, error)
	// StackSets lists the StackSets of namespace ("": all).
	StackSets(ctx context.Context, namespace string) ([]v1alpha1.StackSet, error)
	StackSet(ctx context.Context, namespace, name string) (*v1alpha1.StackSet, error)
	// StackSetStacks lists the Stacks of namespace labelled as the
	// StackSet's (convoy.dev/stackset).
	StackSetStacks(ctx context.Context, namespace, stackset string) ([]v1alpha1.Stack, error)
	// CanApprove says whether the user may approve the object, and if not
	// why.
	CanApprove(ctx context.Context, resource, namespace, name string) (bool, string)
	Approve(ctx context.Context, namespace, name, digest string, allow []string) error
	ApproveStage(ctx context.Context, namespace, pipeline, stage, digest string) error
	// User is the user's name as the API server knows it (what an
	// approval records), "" when it does not say.
	User(ctx context.Context) string
	// StackNamespaces are the namespaces the user may list Stacks in, as
	// far as the user may find out (none when the user may not list
	// Namespaces): where the Stacks page starts when the user may not
	// list Stacks in all of them.
	StackNamespaces(ctx context.Context) []string
}

// ClusterBackend is the Backend of a cluster reached with the user's
// kubeconfig.
type ClusterBackend struct {
	c     client.Client
	kube  kubernetes.Interface
	verbs []string

	mu       sync.Mutex
	user     string
	listable []string
	listedAt time.Time
}

// NewClusterBackend connects with cfg, the user's own credentials.
func NewClusterBackend(cfg *rest.Config) (*ClusterBackend, error) {
	c, err := ctl.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &ClusterBackend{c: c, kube: kube, verbs: []string{"patch", "approve"}}, nil
}

// Stacks lists the Stacks of namespace.
func (b *ClusterBackend) Stacks(ctx context.Context, namespace string) ([]v1alpha1.Stack, error) {
	return ctl.ListStacks(ctx, b.c, namespace)
}

// Stack reads one Stack.
func (b *ClusterBackend) Stack(ctx context.Context, namespace, name string) (*v1alpha1.Stack, error) {
	var st v1alpha1.Stack
	if err := b.c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// Plan reads the Stack's stored plan; without the right to read its
// Secret, the text from its ConfigMap.
func (b *ClusterBackend) Plan(ctx context.Context, st *v1alpha1.Stack) (*planPage, string, error) {
	file, digest, err := planstore.StoredPlan(ctx, b.c, st.Namespace, st.Name)
	if apierrors.IsForbidden(err) {
		text, terr := planstore.StoredPlanText(ctx, b.c, st)
		if terr != nil {
			return nil, "", fmt.Errorf("%w (and its text: %v)", err, terr)
		}
		return nil, text, nil
	}
	if err != nil {
		return nil, "", err
	}
	sp, err := run.DecodePlan(file, fmt.Sprintf("the plan of Stack %s/%s", st.Namespace, st.Name))
	if err != nil {
		return nil, "", err
	}
	pg, err := newPlanPage(sp.Plan, digest)
	return pg, "", err
}

// Events lists the object's Events, newest last.
func (b *ClusterBackend) Events(ctx context.Context, kind, namespace, name string) ([]corev1.Event, error) {
	var l corev1.EventList
	err := b.c.List(ctx, &l, client.InNamespace(namespace),
		client.MatchingFields{"involvedObject.kind": kind, "involvedObject.name": name})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(l.Items, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	return l.Items, nil
}

// History reads a release's Helm records.
func (b *ClusterBackend) History(ctx context.Context, driver release.StorageDriver, namespace, name string) ([]run.Revision, error) {
	return run.RecordHistory(ctx, b.kube, driver, namespace, name)
}

// Pipelines lists the Pipelines of namespace.
func (b *ClusterBackend) Pipelines(ctx context.Context, namespace string) ([]v1alpha1.Pipeline, error) {
	return ctl.ListPipelines(ctx, b.c, namespace)
}

// Pipeline reads one Pipeline.
func (b *ClusterBackend) Pipeline(ctx context.Context, namespace, name string) (*v1alpha1.Pipeline, error) {
	var p v1alpha1.Pipeline
	if err := b.c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// StackSets lists the StackSets of namespace.
func (b *ClusterBackend) StackSets(ctx context.Context, namespace string) ([]v1alpha1.StackSet, error) {
	return ctl.ListStackSets(ctx, b.c, namespace)
}

// StackSet reads one StackSet.
func (b *ClusterBackend) StackSet(ctx context.Context, namespace, name string) (*v1alpha1.StackSet, error) {
	var ss v1alpha1.StackSet
	if err := b.c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &ss); err != nil {
		return nil, err
	}
	return &ss, nil
}

// StackSetStacks lists a StackSet's Stacks: one list request, by label.
func (b *ClusterBackend) StackSetStacks(ctx context.Context, namespace, stackset string) ([]v1alpha1.Stack, error) {
	var l v1alpha1.StackList
	if err := b.c.List(ctx, &l, client.InNamespace(namespace), client.MatchingLabels{v1alpha1.StackSetLabel: stackset}); err != nil {
		return nil, err
	}
	return l.Items, nil
}

// CanApprove asks the API server (a SelfSubjectAccessReview per verb)
// whether the user may approve: approving is patching the object, and
// holding the verb approve, which the approval admission policy checks
// (docs/tenancy.md, Approval).
func (b *ClusterBackend) CanApprove(ctx context.Context, resource, namespace, name string) (bool, string) {
	for _, verb := range b.verbs {
		r := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Group: v1alpha1.GroupVersion.Group, Resource: resource, Namespace: namespace, Name: name, Verb: verb,
			}}}
		if err := b.c.Create(ctx, r); err != nil {
			return false, fmt.Sprintf("could not ask whether you may %s %s: %v", verb, resource, err)
		}
		if !r.Status.Allowed {
			why := fmt.Sprintf("you may not %s %s.%s in namespace %s", verb, resource, v1alpha1.GroupVersion.Group, namespace)
			if r.Status.Reason != "" {
				why += ": " + r.Status.Reason
			}
			return false, why
		}
	}
	return true, ""
}

// Approve approves the Stack's plan of digest (convoy approve).
func (b *ClusterBackend) Approve(ctx context.Context, namespace, name, digest string, allow []string) error {
	_, err := ctl.ApproveWith(ctx, b.c, namespace, name, digest, allow)
	return err
}

// ApproveStage approves a Pipeline stage's digest (convoy promote).
func (b *ClusterBackend) ApproveStage(ctx context.Context, namespace, pipeline, stage, digest string) error {
	_, err := ctl.Promote(ctx, b.c, namespace, pipeline, stage, digest)
	return err
}

// User asks the API server who the user is (a SelfSubjectReview), once:
// the credentials do not change while convoy ui runs.
func (b *ClusterBackend) User(ctx context.Context) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.user == "" {
		b.user, _ = ctl.WhoAmI(ctx, b.c)
	}
	return b.user
}

// maxNamespacesAsked bounds the access reviews StackNamespaces asks.
const maxNamespacesAsked = 200

// StackNamespaces lists the Namespaces (when the user may) and asks the
// API server, with a SelfSubjectAccessReview each, in which the user may
// list Stacks; the answer is kept a minute.
func (b *ClusterBackend) StackNamespaces(ctx context.Context) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.listedAt.IsZero() && time.Since(b.listedAt) < time.Minute {
		return b.listable
	}
	b.listedAt, b.listable = time.Now(), nil
	nss, err := b.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: maxNamespacesAsked})
	if err != nil {
		return nil
	}
	allowed := make([]bool, len(nss.Items))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, ns := range nss.Items {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Group: v1alpha1.GroupVersion.Group, Resource: "stacks", Namespace: ns.Name, Verb: "list"}}}
			allowed[i] = b.c.Create(ctx, r) == nil && r.Status.Allowed
		}()
	}
	wg.Wait()
	for i, ns := range nss.Items {
		if allowed[i] {
			b.listable = append(b.listable, ns.Name)
		}
	}
	return b.listable
}

// errNotFound reports a missing object as the page's 404.
func isNotFound(err error) bool {
	var se apierrors.APIStatus
	return apierrors.IsNotFound(err) || (errors.As(err, &se) && se.Status().Code == 404)
}

func isForbidden(err error) bool { return apierrors.IsForbidden(err) }

func trimDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	if len(d) > 12 {
		return d[:12]
	}
	return d
}
