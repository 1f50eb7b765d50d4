package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/notify"
	"github.com/convoy-sh/convoy/internal/run/gate"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"oras.land/oras-go/v2/errdef"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Pipeline condition reasons (and status's).
const (
	ReasonVerified        = "Verified"
	ReasonPromoting       = "Promoting"
	ReasonStageFailed     = "StageFailed"
	ReasonStackNotFound   = "StackNotFound"
	ReasonStackConflict   = "StackConflict"
	ReasonForeignSource   = "ForeignSource"
	ReasonNoMatchingTag   = "NoMatchingTag"
	ReasonPipelineInvalid = "Invalid"
)

// Reconciler reconciles one Pipeline at a time: it lists the
// repository's tags, and moves the newest matching digest through the
// stages by pinning the stages' Stacks (spec.source) to it. What it needs
// of the Stack side is stacks (the Stack reconciler).
type Reconciler struct {
	client   client.Client
	reader   client.Reader
	events   events.EventRecorder
	notifier *notify.Notifier
	stacks   Stacks
	opts     Options
	// gates run the stages' gates in the background.
	gates *gateRunner
	// pushes are the Pipelines the push receiver was told of (nil: no
	// receiver): listed again at once, whatever the interval.
	pushes Pushes
}

// pipelineReconcileTimeout bounds a Pipeline's reconcile (listing tags,
// reading and pinning Stacks; the gates run apart): one that runs past it
// stops, and writes its status saying why.
const pipelineReconcileTimeout = 2 * time.Minute

// PushRetry is how soon a Pipeline (and a Stack) notified of a push that
// its listing has not seen yet looks again: a registry notifies a
// manifest's push before it moves the tag to it.
const PushRetry = 250 * time.Millisecond

// statusWriteTimeout bounds the status write that ends a reconcile,
// which is made even when the reconcile ran past its own deadline.
const statusWriteTimeout = 15 * time.Second

// Reconcile observes the Pipeline and its Stacks, decides, pins, and
// records the status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	// The reconcile's deadline bounds every request it makes, and so
	// every wait on a client's rate limiter: none waits past it.
	rctx, cancel := context.WithTimeout(ctx, cmp.Or(r.opts.Timeout, pipelineReconcileTimeout))
	defer cancel()
	// Uncached, the Pipeline and its Stacks: a reconcile must see what
	// the previous one recorded and pinned, or it would pin a wave again
	// (past maxParallel), lose the pin times or notify twice.
	var p v1alpha1.Pipeline
	if err := r.reader.Get(rctx, req.NamespacedName, &p); err != nil {
		if apierrors.IsNotFound(err) && r.gates != nil {
			r.gates.prune(req.NamespacedName, nil)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	orig := p.DeepCopy()
	out := r.reconcile(rctx, &p)
	if _, pushed := r.pushed(req.NamespacedName); pushed && out.err == nil {
		// Notified of a push its listing has not seen yet: soon again.
		out.requeue = PushRetry
	}
	if rctx.Err() != nil && ctx.Err() == nil {
		msg := fmt.Sprintf("the reconcile ran past its deadline of %s: %v", cmp.Or(r.opts.Timeout, pipelineReconcileTimeout), out.err)
		pipelineRetrying(&p, ReasonPromoting, msg)
		out.err = errors.New(msg)
	}
	p.Status.Summary = stagesSummary(p.Status.Stages)
	deliveries := r.recordNotices(&p, out.notices, time.Now())
	p.Status.ObservedGeneration = p.Generation
	// Written even when the reconcile ran past its deadline: what it
	// found and why it stopped are the status.
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), statusWriteTimeout)
	defer wcancel()
	if err := r.client.Status().Patch(wctx, &p, client.MergeFrom(orig)); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, errors.Join(out.err, fmt.Errorf("convoy.dev/v1alpha1 Pipeline %s status: %w", req, err))
	}
	if r.notifier != nil {
		r.notifier.Enqueue(deliveries)
	}
	if out.err != nil {
		return reconcile.Result{}, out.err
	}
	return reconcile.Result{RequeueAfter: out.requeue}, nil
}

type pipelineOutcome struct {
	requeue time.Duration
	err     error
	notices []stageNotice
}

// validatePipeline finds what the CRD's schema cannot: a stage named
// twice, a Stack in two stages, a stage's Stack that is neither a name nor
// {namespace, name}, a semver constraint or CEL expression that does not
// compile. Each problem names its field. ns is the Pipeline's namespace.
func validatePipeline(ns string, spec *v1alpha1.PipelineSpec) []string {
	var out []string
	if _, err := artifact.ParseRepository(spec.Source); err != nil {
		out = append(out, "spec.source: "+err.Error())
	}
	follows := 0
	for _, f := range []string{spec.Follow.Semver, spec.Follow.Tag, spec.Follow.Digest} {
		if f != "" {
			follows++
		}
	}
	switch {
	case follows != 1:
		out = append(out, "spec.follow: give exactly one of semver, tag and digest")
	case spec.Follow.Semver != "":
		if _, err := semver.NewConstraint(spec.Follow.Semver); err != nil {
			out = append(out, fmt.Sprintf("spec.follow.semver %q: %v", spec.Follow.Semver, err))
		}
	}
	if len(spec.Stages) == 0 {
		out = append(out, "spec.stages: no stage")
	}
	stageAt := map[string]int{}
	stackAt := map[string]string{}
	for i, stage := range spec.Stages {
		if j, dup := stageAt[stage.Name]; dup {
			out = append(out, fmt.Sprintf("spec.stages[%d].name: stage %q is spec.stages[%d] already", i, stage.Name, j))
		} else {
			stageAt[stage.Name] = i
		}
		if len(stage.Stacks) == 0 && stage.StackSet == nil {
			out = append(out, fmt.Sprintf("spec.stages[%d].stacks: no Stack (and no stackSet)", i))
		}
		if ref := stage.StackSet; ref != nil {
			if bad := ref.Invalid(); bad != "" {
				out = append(out, fmt.Sprintf("spec.stages[%d].stackSet: %s", i, strings.Replace(bad, "Stack name", "StackSet name", 1)))
			} else if key := stackSetKey(ref.In(ns).String()); stackAt[key] != "" {
				out = append(out, fmt.Sprintf("spec.stages[%d].stackSet: StackSet %s is %s already (a StackSet is in one stage)", i, ref.In(ns), stackAt[key]))
			} else {
				stackAt[key] = fmt.Sprintf("spec.stages[%d].stackSet", i)
			}
		}
		for k, ref := range stage.Stacks {
			where := fmt.Sprintf("spec.stages[%d].stacks[%d]", i, k)
			if bad := ref.Invalid(); bad != "" {
				out = append(out, where+": "+bad)
				continue
			}
			name := pipelineStackKey(ns, ref)
			if prev, dup := stackAt[name]; dup {
				out = append(out, fmt.Sprintf("%s: Stack %s is %s already (a Stack is in one stage)", where, name, prev))
			} else {
				stackAt[name] = where
			}
		}
		if stage.MaxParallel != nil && *stage.MaxParallel < 1 {
			out = append(out, fmt.Sprintf("spec.stages[%d].maxParallel: %d is less than 1", i, *stage.MaxParallel))
		}
		for j, g := range stage.Gates {
			n := 0
			for _, set := range []bool{g.Test != nil, g.CEL != "", g.Prometheus != nil} {
				if set {
					n++
				}
			}
			if n != 1 {
				out = append(out, fmt.Sprintf("spec.stages[%d].gates[%d]: a gate is exactly one of test, cel and prometheus", i, j))
				continue
			}
			if len(stage.Stacks) == 0 && (g.Test != nil || g.CEL != "") {
				// They run on the stage's Stacks: on none they would pass
				// without looking at anything.
				out = append(out, fmt.Sprintf("spec.stages[%d].gates[%d]: a test or cel gate runs on the stage's Stacks, and this stage has none: gate the StackSet's Stacks in its own steps (spec.strategy.rolling.steps[].gates), or use a prometheus gate", i, j))
				continue
			}
			if g.CEL != "" {
				if _, err := gate.CompileCEL(g.CEL); err != nil {
					out = append(out, fmt.Sprintf("spec.stages[%d].gates[%d].cel: %v", i, j, err))
				}
			}
		}
	}
	return out
}

// stacksOf reads the Stacks the stages name, by pipelineStackKey: those
// of the Pipeline's namespace with the controller's identity (in one
// list), those it reaches as its service account (reachesAs) as that. A
// missing Stack, a Stack another (older) Pipeline promotes, or one with a
// source of its own is a message (and reason) that stalls the Pipeline:
// nothing is promoted. A Stack its identity may not read is refused
// (by pipelineStackKey, why): the stage that would pin it says so.
func (r *Reconciler) stacksOf(ctx context.Context, p *v1alpha1.Pipeline) stacksRead {
	byName := map[string]*v1alpha1.Stack{}
	listed := false
	var pl v1alpha1.PipelineList
	if err := r.reader.List(ctx, &pl, client.InNamespace(p.Namespace)); err != nil {
		return stacksRead{Err: fmt.Errorf("list the Pipelines of namespace %s: %w", p.Namespace, err)}
	}
	out, refused := map[string]*v1alpha1.Stack{}, map[string]string{}
	pkey := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	var missing, conflicts, foreign []string
	for i, stage := range p.Spec.Stages {
		for k, ref := range stage.Stacks {
			name, nn := pipelineStackKey(p.Namespace, ref), ref.In(p.Namespace)
			var st *v1alpha1.Stack
			if r.reachesAs(p, nn.Namespace) {
				got, refusal, err := r.readStackAs(ctx, p, nn)
				if err != nil {
					return stacksRead{Err: err}
				}
				if refusal != "" {
					refused[name] = refusal
					continue
				}
				st = got
			} else {
				if !listed {
					var l v1alpha1.StackList
					if err := r.reader.List(ctx, &l, client.InNamespace(p.Namespace)); err != nil {
						return stacksRead{Err: fmt.Errorf("list the Stacks of namespace %s: %w", p.Namespace, err)}
					}
					for i := range l.Items {
						byName[l.Items[i].Name] = &l.Items[i]
					}
					listed = true
				}
				st = byName[nn.Name]
			}
			if st == nil {
				missing = append(missing, fmt.Sprintf("convoy.dev/v1alpha1 Stack %s (spec.stages[%d].stacks[%d])", nn, i, k))
				continue
			}
			out[name] = st
			other, err := r.olderPipelineOf(ctx, p, pl.Items, nn)
			if err != nil {
				return stacksRead{Err: err}
			}
			if other != "" {
				conflicts = append(conflicts, fmt.Sprintf("Stack %s is in Pipeline %s, created earlier", name, other))
				continue
			}
			// A Stack pinned by a Pipeline that no longer exists is free to
			// adopt; one with a source of its own, or pinned by another
			// Pipeline, is not.
			owner, owned := v1alpha1.PipelineOwner(st)
			switch {
			case st.Spec.Source == "" || owned && owner == pkey:
			case !owned:
				foreign = append(foreign, fmt.Sprintf("Stack %s has a spec.source of its own (%s)", name, st.Spec.Source))
			case r.pipelineExists(ctx, owner, p.Namespace, pl.Items):
				foreign = append(foreign, fmt.Sprintf("Stack %s is pinned by Pipeline %s (%s)", name, owner, st.Spec.Source))
			}
		}
	}
	read := stacksRead{Stacks: out, Refused: refused, StackSets: map[string]*v1alpha1.StackSet{}}
	if err := r.stackSetsOf(ctx, p, pl.Items, &read, &missing, &conflicts, &foreign); err != nil {
		return stacksRead{Err: err}
	}
	switch {
	case len(missing) > 0:
		read.Stall, read.Reason = "not found: "+strings.Join(missing, ", ")+": nothing is promoted", ReasonStackNotFound
	case len(conflicts) > 0:
		read.Stall, read.Reason = strings.Join(conflicts, "; ")+": a Stack is promoted by one Pipeline; nothing is promoted", ReasonStackConflict
	case len(foreign) > 0:
		read.Stall, read.Reason = strings.Join(foreign, "; ")+": remove it (the Pipeline pins the digest) or take it out of spec.stages; nothing is promoted", ReasonForeignSource
	}
	return read
}

// olderPipelineOf names another Pipeline, created before p (or at once,
// with a smaller namespace/name), whose stages name the Stack: one of
// same (p's namespace's, read uncached) or, from the cache's index, of
// another namespace.
func (r *Reconciler) olderPipelineOf(ctx context.Context, p *v1alpha1.Pipeline, same []v1alpha1.Pipeline, stack types.NamespacedName) (string, error) {
	return r.olderPipelineNaming(ctx, p, same, stack.String(), func(q *v1alpha1.Pipeline) bool { return namesStack(q, stack) })
}

// olderPipelineNaming is olderPipelineOf for what the index key names
// (a Stack's namespace/name, a StackSet's stackSetKey), names saying
// whether a Pipeline names it.
func (r *Reconciler) olderPipelineNaming(ctx context.Context, p *v1alpha1.Pipeline, same []v1alpha1.Pipeline, key string, names func(*v1alpha1.Pipeline) bool) (string, error) {
	var l v1alpha1.PipelineList
	if err := r.client.List(ctx, &l, client.MatchingFields{pipelineStacksIndex: key}); err != nil {
		return "", fmt.Errorf("list the Pipelines naming %s: %w", key, err)
	}
	others := l.Items
	candidates := slices.Clone(same)
	for _, q := range others {
		if q.Namespace != p.Namespace {
			candidates = append(candidates, q)
		}
	}
	self := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	for _, q := range candidates {
		qkey := types.NamespacedName{Namespace: q.Namespace, Name: q.Name}
		if qkey == self {
			continue
		}
		older := q.CreationTimestamp.Before(&p.CreationTimestamp) ||
			q.CreationTimestamp.Equal(&p.CreationTimestamp) && qkey.String() < self.String()
		if older && names(&q) {
			return qkey.String(), nil
		}
	}
	return "", nil
}

// namesStack says whether a stage of q names the Stack.
func namesStack(q *v1alpha1.Pipeline, stack types.NamespacedName) bool {
	for _, stage := range q.Spec.Stages {
		for _, ref := range stage.Stacks {
			if ref.Invalid() == "" && ref.In(q.Namespace) == stack {
				return true
			}
		}
	}
	return false
}

// poll lists the repository's tags when they are due (every interval, and
// when the spec changed) and records the newest matching one.
func (r *Reconciler) poll(ctx context.Context, p *v1alpha1.Pipeline) error {
	l := p.Status.Latest
	key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	saw, isPushed := r.pushed(key)
	if !isPushed && l != nil && l.CheckedAt != nil && p.Status.ObservedGeneration == p.Generation &&
		time.Since(l.CheckedAt.Time) < r.opts.Interval(p) {
		return nil
	}
	repo, err := artifact.ParseRepository(p.Spec.Source)
	if err != nil {
		return err
	}
	if d := p.Spec.Follow.Digest; d != "" && p.Spec.Verify == nil {
		// One digest: nothing to list or resolve.
		now := metav1.Now()
		p.Status.Latest = &v1alpha1.Artifact{Digest: d, CheckedAt: &now}
		sawPush(saw, "", nil, d)
		return nil
	}
	reg, drop, err := r.stacks.Registry(ctx, &v1alpha1.Stack{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace}, Spec: v1alpha1.StackSpec{SourceSecretRef: p.Spec.SourceSecretRef},
	})
	if err != nil {
		return err
	}
	defer drop()
	tag := p.Spec.Follow.Tag
	var tags []string
	if c := p.Spec.Follow.Semver; c != "" {
		tags, err = artifact.Tags(ctx, reg, repo)
		if err != nil {
			return err
		}
		if tag, err = newestMatching(c, tags); err != nil {
			return err
		}
	}
	now := metav1.Now()
	if tag == "" && p.Spec.Follow.Digest == "" {
		p.Status.Latest = &v1alpha1.Artifact{CheckedAt: &now}
		sawPush(saw, p.Spec.Follow.Tag, tags, "")
		return nil
	}
	digest, err := "", error(nil)
	if d := p.Spec.Follow.Digest; d != "" {
		digest = d
	} else {
		digest, err = artifact.Resolve(ctx, reg, repo, tag)
	}
	if err != nil {
		if errors.Is(err, errdef.ErrNotFound) && p.Spec.Follow.Tag != "" {
			p.Status.Latest = &v1alpha1.Artifact{CheckedAt: &now}
			sawPush(saw, p.Spec.Follow.Tag, tags, "")
			return nil
		}
		return err
	}
	if v := p.Spec.Verify; v != nil {
		keys, err := r.stacks.VerifyKeys(ctx, p.Namespace, v)
		if err != nil {
			return err
		}
		if _, err := artifact.Verify(ctx, reg, repo.WithDigest(digest), keys); err != nil {
			return err
		}
	}
	p.Status.Latest = &v1alpha1.Artifact{Tag: tag, Digest: digest, CheckedAt: &now}
	sawPush(saw, p.Spec.Follow.Tag, tags, digest)
	return nil
}

// sawPush clears the Pipeline's push mark once a listing saw the push;
// until then (the registry notifies before it tags) the Pipeline lists
// again PushRetry apart.
func sawPush(saw func(string, []string, string), follow string, tags []string, digest string) {
	if saw != nil {
		saw(follow, tags, digest)
	}
}

// newestMatching is the highest tag that is a semantic version matching
// the constraint ("" when none does); other tags are ignored.
func newestMatching(constraint string, tags []string) (string, error) {
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return "", fmt.Errorf("spec.follow.semver %q: %w", constraint, err)
	}
	var best *semver.Version
	tag := ""
	for _, t := range tags {
		v, err := semver.NewVersion(t)
		if err != nil || !c.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, tag = v, t
		}
	}
	return tag, nil
}

// viewStack is what the stage machine needs of a Stack: the digest it is
// pinned to, and whether its current generation is Ready on it or failed.
func viewStack(st *v1alpha1.Stack) stackView {
	var v stackView
	if ref, err := artifact.ParseRef(st.Spec.Source); err == nil {
		v.Pinned = ref.Digest
	}
	current := st.Status.ObservedGeneration == st.Generation && v.Pinned != ""
	rc := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.CondReady)
	if rc != nil {
		v.NotReady = fmt.Sprintf("Ready=%s %s: %s", rc.Status, rc.Reason, rc.Message)
	} else {
		v.NotReady = "not reconciled yet"
	}
	if !current {
		if st.Status.ObservedGeneration != st.Generation {
			v.NotReady = "its current generation is not reconciled yet"
		}
		return v
	}
	p := st.Status.Plan
	onDigest := st.Status.Source != nil && st.Status.Source.Digest == v.Pinned
	applied := p != nil && p.SourceDigest == v.Pinned && (st.Status.LastAppliedPlan == p.Digest || !p.HasChanges)
	v.Ready = rc != nil && rc.Status == metav1.ConditionTrue && rc.ObservedGeneration == st.Generation && onDigest && applied
	if v.Ready {
		return v
	}
	switch sc := meta.FindStatusCondition(st.Status.Conditions, v1alpha1.CondStalled); {
	case sc != nil && sc.Status == metav1.ConditionTrue:
		v.Failed = fmt.Sprintf("Stalled %s: %s", sc.Reason, sc.Message)
	case rc != nil && rc.Status == metav1.ConditionFalse && rc.Reason == v1alpha1.ReasonApplyFailed:
		v.Failed = fmt.Sprintf("%s: %s", rc.Reason, rc.Message)
	case p != nil && p.SourceDigest == v.Pinned && st.Status.LastFailedPlan == p.Digest:
		v.Failed = "the apply of plan " + p.Digest + " failed: " + st.Status.LastError
	}
	return v
}

// pin sets the Stack's spec.source to the repository at digest and
// records the Pipeline as its owner. A Stack the Pipeline reaches as its
// service account is patched as it, once a SubjectAccessReview said it
// may: otherwise refusal says why, and the Stack is left as it is.
func (r *Reconciler) pin(ctx context.Context, p *v1alpha1.Pipeline, st *v1alpha1.Stack, digest string) (refusal string, err error) {
	repo, err := artifact.ParseRepository(p.Spec.Source)
	if err != nil {
		return "", err
	}
	c := client.Writer(r.client)
	if r.reachesAs(p, st.Namespace) {
		nn := types.NamespacedName{Namespace: st.Namespace, Name: st.Name}
		if refusal, err := r.mayPatch(ctx, p, nn); refusal != "" || err != nil {
			return refusal, err
		}
		if c, err = r.clientAs(p); err != nil {
			return "", err
		}
	}
	before := st.DeepCopy()
	st.Spec.Source = repo.WithDigest(digest).String()
	if st.Annotations == nil {
		st.Annotations = map[string]string{}
	}
	st.Annotations[v1alpha1.PipelineAnnotation] = v1alpha1.PipelineAnnotationValue(p.Namespace, p.Name, st.Namespace)
	if err := c.Patch(ctx, st, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return "", fmt.Errorf("convoy.dev/v1alpha1 Stack %s/%s: pin to %s: %w", st.Namespace, st.Name, digest, err)
	}
	name := pipelineStackKey(p.Namespace, v1alpha1.PipelineStackRef{Namespace: st.Namespace, Name: st.Name})
	r.event(p, corev1.EventTypeNormal, "Pinned", "Promote", fmt.Sprintf("Stack %s pinned to %s", name, digest))
	return "", nil
}

// stacksStatus is status.stacks: each Stack's digest, readiness and the
// times it was pinned and seen Ready.
func stacksStatus(p *v1alpha1.Pipeline, views map[string]stackView, pins map[string]string, now time.Time) []v1alpha1.PipelineStack {
	prev := map[string]v1alpha1.PipelineStack{}
	for _, s := range p.Status.Stacks {
		prev[pipelineStackKey(p.Namespace, v1alpha1.PipelineStackRef{Namespace: s.Namespace, Name: s.Name})] = s
	}
	t := metav1.NewTime(now)
	var out []v1alpha1.PipelineStack
	for _, stage := range p.Spec.Stages {
		for _, ref := range stage.Stacks {
			name, nn := pipelineStackKey(p.Namespace, ref), ref.In(p.Namespace)
			v := views[name]
			s := v1alpha1.PipelineStack{Namespace: nn.Namespace, Name: nn.Name, Stage: stage.Name, Digest: v.Pinned, Ready: v.Ready}
			if old, ok := prev[name]; ok && old.Digest == v.Pinned {
				s.PinnedAt, s.ReadyAt = old.PinnedAt, old.ReadyAt
			}
			if _, pinned := pins[name]; pinned {
				s.PinnedAt, s.ReadyAt = &t, nil
			}
			if v.Ready && s.ReadyAt == nil {
				s.ReadyAt = &t
			}
			out = append(out, s)
		}
	}
	return out
}

// stagesSummary is "staging: 1a2b3c4d Verified, production: … Waiting".
func stagesSummary(stages []v1alpha1.StageStatus) string {
	var parts []string
	for _, s := range stages {
		d := shortDigest(s.Digest)
		if d == "" {
			d = "-"
		}
		parts = append(parts, fmt.Sprintf("%s: %s %s", s.Name, d, s.Phase))
	}
	return strings.Join(parts, ", ")
}

// shortDigest is the first 12 hex digits of a sha256 digest.
func shortDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// setPipelineConditions says where the pipeline is: Ready when every
// stage is verified on the newest digest it may have.
func setPipelineConditions(p *v1alpha1.Pipeline) {
	for _, s := range p.Status.Stages {
		switch s.Phase {
		case v1alpha1.PhaseFailed:
			pipelineReady(p, metav1.ConditionFalse, ReasonStageFailed, fmt.Sprintf("stage %s failed on %s: %s", s.Name, s.Digest, s.Message))
			return
		case v1alpha1.PhaseAwaitingApproval:
			pipelineReady(p, metav1.ConditionFalse, v1alpha1.ReasonApprovalRequired, fmt.Sprintf("stage %s: %s", s.Name, s.Message))
			return
		}
	}
	for _, s := range p.Status.Stages {
		if s.Phase == v1alpha1.PhasePromoting || s.Phase == v1alpha1.PhaseBaking {
			pipelineRetrying(p, ReasonPromoting, fmt.Sprintf("stage %s %s: %s", s.Name, s.Phase, s.Message))
			return
		}
	}
	msg := "every stage is verified on " + p.Status.Latest.Digest
	if t := p.Status.Latest.Tag; t != "" {
		msg += " (" + t + ")"
	}
	pipelineReady(p, metav1.ConditionTrue, ReasonVerified, msg)
}

// stall records a Pipeline that promotes nothing until its spec or its
// Stacks change (both are watched); the event is sent when the message
// changes, not at every look.
func (r *Reconciler) stall(p *v1alpha1.Pipeline, reason, msg string) {
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.CondStalled); c == nil || c.Message != msg {
		r.event(p, corev1.EventTypeWarning, reason, "Reconcile", msg)
	}
	setPipelineCond(p, v1alpha1.CondReady, metav1.ConditionFalse, reason, msg)
	setPipelineCond(p, v1alpha1.CondStalled, metav1.ConditionTrue, reason, msg)
	meta.RemoveStatusCondition(&p.Status.Conditions, v1alpha1.CondReconciling)
}

func pipelineReady(p *v1alpha1.Pipeline, cs metav1.ConditionStatus, reason, msg string) {
	setPipelineCond(p, v1alpha1.CondReady, cs, reason, msg)
	meta.RemoveStatusCondition(&p.Status.Conditions, v1alpha1.CondStalled)
	meta.RemoveStatusCondition(&p.Status.Conditions, v1alpha1.CondReconciling)
}

func pipelineRetrying(p *v1alpha1.Pipeline, reason, msg string) {
	setPipelineCond(p, v1alpha1.CondReady, metav1.ConditionFalse, reason, msg)
	setPipelineCond(p, v1alpha1.CondReconciling, metav1.ConditionTrue, reason, msg)
	meta.RemoveStatusCondition(&p.Status.Conditions, v1alpha1.CondStalled)
}

func setPipelineCond(p *v1alpha1.Pipeline, typ string, cs metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{
		Type: typ, Status: cs, Reason: reason, Message: msg, ObservedGeneration: p.Generation,
	})
}

func (r *Reconciler) event(p *v1alpha1.Pipeline, typ, reason, action, note string) {
	if r.events == nil {
		return
	}
	if len(note) > 1000 {
		note = note[:1000] + "…"
	}
	r.events.Eventf(p, nil, typ, reason, action, "%s", note)
}

// PipelinesOfStack maps a Stack to the Pipelines, of any namespace, whose
// stages name it (the cache's pipelineStacksIndex).
func (r *Reconciler) PipelinesOfStack(ctx context.Context, obj client.Object) []reconcile.Request {
	l, err := r.pipelinesNaming(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()})
	if err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(l))
	for _, p := range l {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}})
	}
	return out
}

// StackView is what a Pipeline sees of a Stack: the digest it is pinned
// to, and whether it is Ready on it (its plan applied) or failed on it.
type StackView = stackView

// ViewStack is the Stack as a Pipeline's stage sees it; a StackSet's
// rollout judges its Stacks the same way.
func ViewStack(st *v1alpha1.Stack) StackView { return viewStack(st) }
