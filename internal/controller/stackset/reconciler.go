package stackset

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// SpecAnnotation on a generated Stack is the hash of the spec the
// StackSet last wrote: a Stack whose spec differs while the hash is that
// of what the StackSet would write now was edited by hand (drifted).
const SpecAnnotation = "convoy.dev/stackset-spec"

// maxDrifted bounds status.drifted.
const maxDrifted = 50

// Options are the controller's settings a StackSet's reconcile reads.
type Options struct {
	// Strict is --tenancy strict: a registration of another namespace
	// must list the StackSet's in convoy.dev/allowed-namespaces.
	Strict bool
	// Timeout bounds one reconcile (0: a minute).
	Timeout time.Duration
	// Namespace is the only namespace the informers watch ("": all);
	// the registrations of another are read uncached.
	Namespace string
}

// RegistrationVersionAnnotation on a copy of a registration's kubeconfig
// is the resourceVersion of the registration it was copied from.
const RegistrationVersionAnnotation = "convoy.dev/registration-version"

// Deps are what a Reconciler is made of.
type Deps struct {
	// Client writes. Cache reads from the manager's shared informers:
	// the StackSets, Stacks and Pipelines, and the metadata of the
	// Secrets (the registrations' labels). Reader reads uncached what
	// the informers do not hold: a registration's kubeconfig, when a
	// copy of it is made, and a Stack of another shard whose name is
	// taken.
	Client  client.Client
	Cache   client.Reader
	Reader  client.Reader
	Scheme  *runtime.Scheme
	Events  events.EventRecorder // nil: none
	Options Options
}

// Reconciler reconciles StackSets: it generates their Stacks (and a
// rolling StackSet's Pipeline) and records what they do.
type Reconciler struct {
	client client.Client
	cache  client.Reader
	reader client.Reader
	scheme *runtime.Scheme
	events events.EventRecorder
	opts   Options
}

// New is the StackSet reconciler.
func New(d Deps) *Reconciler {
	return &Reconciler{client: d.Client, cache: cmp.Or[client.Reader](d.Cache, d.Reader), reader: d.Reader, scheme: d.Scheme, events: d.Events, opts: d.Options}
}

// Reconcile generates the StackSet's Stacks, removes those of elements
// gone, restores those edited by hand, and records their states.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(r.opts.Timeout, time.Minute))
	defer cancel()
	var ss v1alpha1.StackSet
	if err := r.cache.Get(ctx, req.NamespacedName, &ss); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !ss.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	orig := ss.DeepCopy()
	err := r.reconcile(ctx, &ss)
	if errors.Is(err, errStale) {
		// The cache is behind a write of this controller (a Stack just
		// created, updated): looked at again once it caught up.
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	if err != nil {
		setCond(&ss, v1alpha1.CondReady, metav1.ConditionFalse, v1alpha1.ReasonProgressing, err.Error())
	}
	ss.Status.ObservedGeneration = ss.Generation
	if perr := r.client.Status().Patch(ctx, &ss, client.MergeFrom(orig)); perr != nil && !apierrors.IsNotFound(perr) {
		return reconcile.Result{}, errors.Join(err, fmt.Errorf("convoy.dev/v1alpha1 StackSet %s status: %w", req, perr))
	}
	return reconcile.Result{}, err
}

func (r *Reconciler) reconcile(ctx context.Context, ss *v1alpha1.StackSet) error {
	elems, err := elements(ss.Namespace, ss.Spec.Generators, r.registrations(ctx), r.opts.Strict)
	var ge *GenerateError
	if errors.As(err, &ge) {
		r.stall(ss, ge.Reason, ge.Msg)
		return nil
	}
	if err != nil {
		return err
	}
	if len(elems) == 0 {
		msg := "the generators give no element (no cluster registration matches)"
		if len(ss.Status.Stacks) > 0 {
			msg += ": the Stacks generated before are kept until an element is given again"
		}
		r.stall(ss, v1alpha1.ReasonNoClusters, msg)
		return nil
	}
	gen, err := render(ss, elems)
	if errors.As(err, &ge) {
		r.stall(ss, ge.Reason, ge.Msg)
		return nil
	}
	if err != nil {
		return err
	}
	var l v1alpha1.StackList
	if err := r.cache.List(ctx, &l, client.InNamespace(ss.Namespace)); err != nil {
		return fmt.Errorf("list the Stacks of namespace %s: %w", ss.Namespace, err)
	}
	existing := map[string]*v1alpha1.Stack{}
	for i := range l.Items {
		existing[l.Items[i].Name] = &l.Items[i]
	}
	var conflicts []string
	for _, g := range gen {
		if st := existing[g.stack.Name]; st != nil && !ownedBy(st, ss) {
			conflicts = append(conflicts, fmt.Sprintf("element %q: convoy.dev/v1alpha1 Stack %s/%s %s", g.element.name, ss.Namespace, st.Name, ownerText(st)))
		}
	}
	var steps map[string]string
	var pl *v1alpha1.Pipeline
	rolling := ss.Spec.Strategy != nil && ss.Spec.Strategy.Rolling != nil
	if rolling {
		if steps, err = assignSteps(ss.Spec.Strategy.Rolling.Steps, gen); err != nil {
			r.stall(ss, v1alpha1.ReasonInvalid, err.Error())
			return nil
		}
		var old v1alpha1.Pipeline
		err := r.cache.Get(ctx, types.NamespacedName{Namespace: ss.Namespace, Name: ss.Name}, &old)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("convoy.dev/v1alpha1 Pipeline %s/%s: %w", ss.Namespace, ss.Name, err)
		case !ownedBy(&old, ss):
			conflicts = append(conflicts, fmt.Sprintf("the rollout's convoy.dev/v1alpha1 Pipeline %s/%s exists and is not this StackSet's", ss.Namespace, ss.Name))
		default:
			pl = &old
		}
	}
	if len(conflicts) > 0 {
		r.stall(ss, v1alpha1.ReasonStackConflict, strings.Join(conflicts, "; ")+": nothing is generated")
		return nil
	}
	if err := r.mirror(ctx, ss, gen); err != nil {
		return err
	}
	// Drifted names the Stacks restored since the spec last changed.
	if ss.Status.ObservedGeneration != ss.Generation {
		ss.Status.Drifted = nil
	}
	var stacks []*v1alpha1.Stack
	for _, g := range gen {
		st, err := r.apply(ctx, ss, g, existing[g.stack.Name], rolling)
		var taken *takenError
		if errors.As(err, &taken) {
			r.stall(ss, v1alpha1.ReasonStackConflict, taken.msg+": nothing more is generated")
			return nil
		}
		if err != nil {
			return err
		}
		stacks = append(stacks, st)
	}
	if err := r.removeGone(ctx, ss, gen, l.Items); err != nil {
		return err
	}
	if rolling {
		var approvals []v1alpha1.StageApproval
		if pl != nil {
			approvals = pl.Spec.Approvals
		}
		want, err := rolloutPipeline(ss, ss.Spec.Strategy.Rolling.Steps, gen, steps, approvals)
		if err != nil {
			r.stall(ss, v1alpha1.ReasonTemplateInvalid, err.Error())
			return nil
		}
		if want == nil {
			// No source yet: nothing to roll out until a Pipeline stage
			// pins the template.
			if err := r.dropPipeline(ctx, ss); err != nil {
				return err
			}
			pl = nil
		} else if pl, err = r.applyPipeline(ctx, ss, want, pl); err != nil {
			return err
		}
	} else if err := r.dropPipeline(ctx, ss); err != nil {
		return err
	}
	r.record(ss, gen, stacks, steps, pl)
	return nil
}

// registrations lists the cluster registrations of a namespace.
func (r *Reconciler) registrations(ctx context.Context) Registrations {
	return func(ns string) ([]Registration, error) {
		// Their metadata, from the informer of the Secrets' metadata.
		l := secretMetaList()
		if err := r.readerFor(ns).List(ctx, l, client.InNamespace(ns), client.MatchingLabels{v1alpha1.RegistrationLabel: v1alpha1.RegistrationValue}); err != nil {
			return nil, fmt.Errorf("list the cluster registrations of namespace %s: %w", ns, err)
		}
		out := make([]Registration, 0, len(l.Items))
		for _, s := range l.Items {
			reg := Registration{Namespace: s.Namespace, Name: s.Name, Labels: map[string]string{}, Version: s.ResourceVersion}
			for k, v := range s.Labels {
				if k != v1alpha1.RegistrationLabel {
					reg.Labels[k] = v
				}
			}
			if a, ok := s.Annotations[v1alpha1.AllowedNamespacesAnnotation]; ok {
				reg.HasAllowed = true
				for _, n := range strings.Split(a, ",") {
					if n = strings.TrimSpace(n); n != "" {
						reg.Allowed = append(reg.Allowed, n)
					}
				}
			}
			out = append(out, reg)
		}
		return out, nil
	}
}

// mirror copies the kubeconfig of each registration of another
// namespace into a Secret of the StackSet's, which the Stacks read (a
// Stack reads Secrets of its own namespace only under strict tenancy).
// Copies no element needs any more are deleted.
func (r *Reconciler) mirror(ctx context.Context, ss *v1alpha1.StackSet, gen []generated) error {
	want := map[string]*Registration{}
	for _, g := range gen {
		if c := g.element.cluster; c != nil && c.Namespace != ss.Namespace {
			want[mirrorName(ss.Name, c)] = c
		}
	}
	// The copies there are, by their metadata: a copy of the
	// registration's current version is not read or written again.
	l := secretMetaList()
	if err := r.cache.List(ctx, l, client.InNamespace(ss.Namespace), client.MatchingLabels{v1alpha1.StackSetLabel: ss.Name}); err != nil {
		return fmt.Errorf("list the kubeconfig copies of namespace %s: %w", ss.Namespace, err)
	}
	have := map[string]*metav1.PartialObjectMetadata{}
	for i := range l.Items {
		have[l.Items[i].Name] = &l.Items[i]
	}
	for name, reg := range want {
		if h := have[name]; h != nil && ownedBy(h, ss) && reg.Version != "" && h.Annotations[RegistrationVersionAnnotation] == reg.Version {
			continue
		}
		var src corev1.Secret
		if err := r.reader.Get(ctx, types.NamespacedName{Namespace: reg.Namespace, Name: reg.Name}, &src); err != nil {
			return fmt.Errorf("cluster registration v1 Secret %s: %w", reg.Key(), err)
		}
		dst := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ss.Namespace}}
		_, err := controllerutil.CreateOrUpdate(ctx, r.client, dst, func() error {
			dst.Labels = map[string]string{v1alpha1.StackSetLabel: ss.Name}
			dst.Annotations = map[string]string{"convoy.dev/registration": reg.Key(), RegistrationVersionAnnotation: src.ResourceVersion}
			dst.Data = map[string][]byte{v1alpha1.KubeconfigKey: src.Data[v1alpha1.KubeconfigKey]}
			return controllerutil.SetControllerReference(ss, dst, r.scheme)
		})
		if err != nil {
			return fmt.Errorf("v1 Secret %s/%s (the kubeconfig of cluster %s): %w", ss.Namespace, name, reg.Key(), err)
		}
	}
	for name, s := range have {
		if _, ok := want[name]; !ok && ownedBy(s, ss) {
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, UID: s.UID}}
			if err := r.client.Delete(ctx, sec, client.Preconditions{UID: &s.UID}); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("v1 Secret %s/%s: %w", s.Namespace, s.Name, err)
			}
		}
	}
	return nil
}

// readerFor reads the registrations of a namespace: from the informers,
// unless the controller watches only another namespace.
func (r *Reconciler) readerFor(ns string) client.Reader {
	if r.opts.Namespace != "" && ns != r.opts.Namespace {
		return r.reader
	}
	return r.cache
}

// secretMetaList is a list of Secrets' metadata (what the informers hold
// of Secrets).
func secretMetaList() *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	return l
}

// errStale: a write found the cache behind this controller's own writes.
var errStale = errors.New("the cache is behind")

// takenError: a generated name is a Stack the cache did not show (of
// another shard, or just created by another StackSet).
type takenError struct{ msg string }

func (e *takenError) Error() string { return e.msg }

// apply creates the element's Stack, or updates it to what the template
// says now; a Stack edited by hand is restored and named in
// status.drifted. What people and the rollout write on a Stack is kept:
// its approvals and, under a rolling strategy, its source.
func (r *Reconciler) apply(ctx context.Context, ss *v1alpha1.StackSet, g generated, old *v1alpha1.Stack, rolling bool) (*v1alpha1.Stack, error) {
	want := g.stack.DeepCopy()
	id := fmt.Sprintf("convoy.dev/v1alpha1 Stack %s/%s (element %q)", want.Namespace, want.Name, g.element.name)
	if old == nil {
		if rolling {
			want.Spec.Source = ""
		}
		want.Annotations[SpecAnnotation] = specHash(&want.Spec, rolling)
		if err := controllerutil.SetControllerReference(ss, want, r.scheme); err != nil {
			return nil, err
		}
		if err := r.client.Create(ctx, want); apierrors.IsAlreadyExists(err) {
			// Not in the cache: of another shard, or just created.
			var st v1alpha1.Stack
			if gerr := r.reader.Get(ctx, client.ObjectKeyFromObject(want), &st); gerr == nil && !ownedBy(&st, ss) {
				return nil, &takenError{fmt.Sprintf("element %q: convoy.dev/v1alpha1 Stack %s/%s %s", g.element.name, st.Namespace, st.Name, ownerText(&st))}
			}
			return nil, errStale
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		r.event(ss, corev1.EventTypeNormal, "Generated", fmt.Sprintf("Stack %s generated for element %q", want.Name, g.element.name))
		return want, nil
	}
	// The rollout's Pipeline pins the Stacks it promotes; a Stack of a
	// StackSet that only now rolls out has the template's source, which
	// the Pipeline would refuse as its own: it waits for its pin.
	pinned := rolling && old.Annotations[v1alpha1.PipelineAnnotation] == v1alpha1.PipelineAnnotationValue(ss.Namespace, ss.Name, old.Namespace)
	keep(&want.Spec, &old.Spec, pinned)
	if rolling && !pinned {
		want.Spec.Source = ""
	}
	hash := specHash(&want.Spec, rolling)
	same := equality.Semantic.DeepEqual(want.Spec, old.Spec) && old.Annotations[SpecAnnotation] == hash &&
		containsAll(old.Labels, want.Labels) && old.Annotations[v1alpha1.ElementAnnotation] == g.element.name
	if same {
		return old, nil
	}
	drifted := old.Annotations[SpecAnnotation] == hash && !equality.Semantic.DeepEqual(want.Spec, old.Spec)
	st := old.DeepCopy()
	st.Spec = want.Spec
	for k, v := range want.Labels {
		if st.Labels == nil {
			st.Labels = map[string]string{}
		}
		st.Labels[k] = v
	}
	if st.Annotations == nil {
		st.Annotations = map[string]string{}
	}
	st.Annotations[SpecAnnotation] = hash
	st.Annotations[v1alpha1.ElementAnnotation] = g.element.name
	if err := r.client.Update(ctx, st); apierrors.IsConflict(err) {
		return nil, errStale
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	if drifted {
		if !slices.Contains(ss.Status.Drifted, st.Name) && len(ss.Status.Drifted) < maxDrifted {
			ss.Status.Drifted = append(ss.Status.Drifted, st.Name)
		}
		r.event(ss, corev1.EventTypeWarning, v1alpha1.ReasonDrifted, fmt.Sprintf("Stack %s was edited by hand: restored to the template", st.Name))
	}
	return st, nil
}

// keep carries over to want what others write on a generated Stack:
// approvals (convoy approve) and the source the rollout pinned.
func keep(want, old *v1alpha1.StackSpec, pinned bool) {
	want.ApprovedPlan = old.ApprovedPlan
	want.AllowPolicies = old.AllowPolicies
	if old.Approvals != nil {
		a := old.Approvals.DeepCopy()
		if want.Approvals != nil {
			a.Required = want.Approvals.Required
		}
		want.Approvals = a
	}
	if pinned {
		want.Source = old.Source
	}
}

// specHash hashes a spec as the StackSet writes it, but for what others
// write on it (keep).
func specHash(spec *v1alpha1.StackSpec, rolling bool) string {
	s := spec.DeepCopy()
	s.ApprovedPlan, s.AllowPolicies, s.Approvals = "", nil, nil
	if rolling {
		s.Source = ""
	}
	b, _ := json.Marshal(s)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func containsAll(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// removeGone deletes the StackSet's Stacks of elements gone: with
// removal orphan the releases stay (prune false), with destroy they are
// uninstalled (prune true).
func (r *Reconciler) removeGone(ctx context.Context, ss *v1alpha1.StackSet, gen []generated, all []v1alpha1.Stack) error {
	want := map[string]bool{}
	for _, g := range gen {
		want[g.stack.Name] = true
	}
	prune := ss.Spec.Removal == v1alpha1.RemovalDestroy
	for i := range all {
		st := &all[i]
		if want[st.Name] || !ownedBy(st, ss) || !st.DeletionTimestamp.IsZero() {
			continue
		}
		if st.Spec.Prune != prune {
			before := st.DeepCopy()
			st.Spec.Prune = prune
			if err := r.client.Patch(ctx, st, client.MergeFrom(before)); err != nil {
				return fmt.Errorf("convoy.dev/v1alpha1 Stack %s/%s: set prune for removal: %w", st.Namespace, st.Name, err)
			}
		}
		if err := r.client.Delete(ctx, st); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("convoy.dev/v1alpha1 Stack %s/%s: %w", st.Namespace, st.Name, err)
		}
		r.event(ss, corev1.EventTypeNormal, "Removed", fmt.Sprintf("Stack %s removed: its element %q is gone (removal %s)", st.Name, st.Annotations[v1alpha1.ElementAnnotation], cmp.Or(ss.Spec.Removal, v1alpha1.RemovalOrphan)))
	}
	return nil
}

// applyPipeline creates or updates the rollout's Pipeline.
func (r *Reconciler) applyPipeline(ctx context.Context, ss *v1alpha1.StackSet, want, old *v1alpha1.Pipeline) (*v1alpha1.Pipeline, error) {
	id := fmt.Sprintf("the rollout's convoy.dev/v1alpha1 Pipeline %s/%s", want.Namespace, want.Name)
	if shard, ok := ss.Labels[v1alpha1.ShardLabel]; ok {
		want.Labels[v1alpha1.ShardLabel] = shard
	}
	if old == nil {
		if err := controllerutil.SetControllerReference(ss, want, r.scheme); err != nil {
			return nil, err
		}
		if err := r.client.Create(ctx, want); apierrors.IsAlreadyExists(err) {
			return nil, errStale
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		return want, nil
	}
	if equality.Semantic.DeepEqual(old.Spec, want.Spec) && containsAll(old.Labels, want.Labels) {
		return old, nil
	}
	p := old.DeepCopy()
	p.Spec = want.Spec
	for k, v := range want.Labels {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[k] = v
	}
	if err := r.client.Update(ctx, p); apierrors.IsConflict(err) {
		return nil, errStale
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	return p, nil
}

// dropPipeline deletes the rollout's Pipeline of a StackSet that no
// longer rolls out.
func (r *Reconciler) dropPipeline(ctx context.Context, ss *v1alpha1.StackSet) error {
	var p v1alpha1.Pipeline
	err := r.cache.Get(ctx, types.NamespacedName{Namespace: ss.Namespace, Name: ss.Name}, &p)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("convoy.dev/v1alpha1 Pipeline %s/%s: %w", ss.Namespace, ss.Name, err)
	}
	if !ownedBy(&p, ss) {
		return nil
	}
	return client.IgnoreNotFound(r.client.Delete(ctx, &p))
}

// record writes the status: each Stack's element, cluster, step, digest
// and state, the steps' phases, the plans grouped, and Ready.
func (r *Reconciler) record(ss *v1alpha1.StackSet, gen []generated, stacks []*v1alpha1.Stack, steps map[string]string, pl *v1alpha1.Pipeline) {
	ss.Status.Stacks = nil
	for i, g := range gen {
		st := stacks[i]
		s := v1alpha1.StackSetStack{Name: st.Name, Element: g.element.name, Step: steps[st.Name], State: stateOf(st)}
		if c := g.element.cluster; c != nil {
			s.Cluster = c.Key()
		}
		if st.Status.Source != nil {
			s.Digest = st.Status.Source.Digest
		}
		ss.Status.Stacks = append(ss.Status.Stacks, s)
	}
	ss.Status.Plans = groupPlans(stacks)
	ss.Status.PlanSummary = planSummary(ss.Status.Plans)
	ss.Status.Summary = countSummary(stacks)
	ss.Status.Steps = nil
	if pl != nil {
		ss.Status.Steps = pl.Status.Stages
	}
	ss.Status.Rollout = rolloutOf(ss, stacks, pl, onClusterOf(ss.Status.Stacks))
	meta.RemoveStatusCondition(&ss.Status.Conditions, v1alpha1.CondStalled)
	clusters := map[string]string{}
	for _, s := range ss.Status.Stacks {
		clusters[s.Name] = s.Cluster
	}
	for _, s := range ss.Status.Steps {
		if s.Phase == v1alpha1.PhaseFailed {
			setCond(ss, v1alpha1.CondReady, metav1.ConditionFalse, v1alpha1.ReasonHalted,
				fmt.Sprintf("step %s failed on %s%s: %s: later steps are held until a newer digest", s.Name, s.Digest, onClusters(s.Name, steps, clusters), s.Message))
			return
		}
	}
	// A Stack that fails on its step's digest (its cluster unreachable,
	// its plan refused) holds the rollout as a failed step does; the
	// Pipeline retries it, and the step goes on once it recovers.
	for _, s := range ss.Status.Steps {
		if s.Digest == "" || (s.Phase != v1alpha1.PhasePromoting && s.Phase != v1alpha1.PhaseBaking) {
			continue
		}
		if failed := failingOn(stacks, steps, s.Name, s.Digest, clusters); len(failed) > 0 {
			setCond(ss, v1alpha1.CondReady, metav1.ConditionFalse, v1alpha1.ReasonHalted,
				fmt.Sprintf("step %s holds on %s: %s: later steps wait until it recovers", s.Name, s.Digest, strings.Join(failed, "; ")))
			return
		}
	}
	if ss.Spec.Paused && pl != nil {
		setCond(ss, v1alpha1.CondReady, metav1.ConditionFalse, v1alpha1.ReasonPaused, "spec.paused: no Stack is pinned to a new digest (convoy stackset resume)")
		return
	}
	var notReady []string
	for _, st := range stacks {
		if stateOf(st) != "Ready" {
			n := st.Name
			if c := clusters[st.Name]; c != "" {
				n += " (cluster " + c + ")"
			}
			notReady = append(notReady, n+" "+stateOf(st))
		}
	}
	for _, s := range ss.Status.Steps {
		if s.Phase != v1alpha1.PhaseVerified {
			notReady = append(notReady, fmt.Sprintf("step %s %s", s.Name, s.Phase))
		}
	}
	if len(notReady) > 0 {
		reason := v1alpha1.ReasonProgressing
		if pl != nil {
			reason = v1alpha1.ReasonRolling
		}
		setCond(ss, v1alpha1.CondReady, metav1.ConditionFalse, reason, "waiting for "+strings.Join(notReady, ", "))
		return
	}
	setCond(ss, v1alpha1.CondReady, metav1.ConditionTrue, v1alpha1.ReasonUpToDate, ss.Status.Summary)
}

// stall records a StackSet that generates nothing until its spec or the
// registrations change.
func (r *Reconciler) stall(ss *v1alpha1.StackSet, reason, msg string) {
	if c := meta.FindStatusCondition(ss.Status.Conditions, v1alpha1.CondReady); c == nil || c.Message != msg {
		r.event(ss, corev1.EventTypeWarning, reason, msg)
	}
	setCond(ss, v1alpha1.CondReady, metav1.ConditionFalse, reason, msg)
	setCond(ss, v1alpha1.CondStalled, metav1.ConditionTrue, reason, msg)
}

func setCond(ss *v1alpha1.StackSet, typ string, cs metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&ss.Status.Conditions, metav1.Condition{Type: typ, Status: cs, Reason: reason, Message: msg, ObservedGeneration: ss.Generation})
}

func (r *Reconciler) event(ss *v1alpha1.StackSet, typ, reason, note string) {
	if r.events == nil {
		return
	}
	if len(note) > 1000 {
		note = note[:1000] + "…"
	}
	r.events.Eventf(ss, nil, typ, reason, "Generate", "%s", note)
}

// ownedBy says whether obj's controller is the StackSet.
func ownedBy(obj metav1.Object, ss *v1alpha1.StackSet) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.UID == ss.UID
}

// ownerText says whose a Stack is, for a conflict.
func ownerText(st *v1alpha1.Stack) string {
	if ref := metav1.GetControllerOf(st); ref != nil && ref.Kind == "StackSet" {
		return "is generated by StackSet " + ref.Name + " (created earlier): a Stack is one StackSet's"
	}
	return "exists and is no StackSet's"
}

// StackSetsOfRegistration maps a registration Secret (or a Stack, or a
// Pipeline) to the StackSets to reconcile: a Stack's or Pipeline's
// owner; for a registration, every StackSet (registrations are few and
// change seldom).
func (r *Reconciler) StackSetsOfRegistration(ctx context.Context, obj client.Object) []reconcile.Request {
	if obj.GetLabels()[v1alpha1.RegistrationLabel] != v1alpha1.RegistrationValue {
		return nil
	}
	var l v1alpha1.StackSetList
	if err := r.client.List(ctx, &l); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(l.Items))
	for _, ss := range l.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ss.Namespace, Name: ss.Name}})
	}
	slices.SortFunc(out, func(a, b reconcile.Request) int { return strings.Compare(a.String(), b.String()) })
	return out
}
