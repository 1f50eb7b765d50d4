package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/controller/notify"
	"github.com/convoy-sh/convoy/internal/controller/planstore"
	"github.com/convoy-sh/convoy/internal/diagtext"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/dag"
	"github.com/hashicorp/hcl/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// reconciler reconciles one Stack at a time (controller-runtime never
// runs one key twice at once).
type reconciler struct {
	client client.Client // Stacks from the cache; writes
	reader client.Reader // Secrets and ConfigMaps, uncached
	// readers read what Stacks name as their service accounts (nil: as
	// reader).
	readers  *stackReaders
	scheme   *runtime.Scheme
	events   events.EventRecorder
	opts     Options
	metrics  *metrics
	registry artifact.Registry
	resolver *source.Resolver
	backoff  *intervalBackoff
	notifier *notify.Notifier // nil: notifications are not sent
	budget   *kube.Budget     // shared by every Stack's runs
	// traffic counts every Stack run's requests (the kube requests
	// metric); conns keeps their cluster connections across reconciles.
	traffic *kube.Traffic
	conns   *run.Connections
	// wrote are the Stacks (namespace/name) whose last run applied: their
	// next plan lists directly instead of reading the shared informers,
	// which may not have seen the apply's writes yet (freshness guard).
	wrote sync.Map
	// written is the resourceVersion of each Stack (namespace/name) as
	// its last reconcile's status write left it: a reconcile that finds
	// an older copy in the cache reads the Stack from the API server.
	written stackVersions
	cache   Cache
	// pulled are the artifacts each set of credentials has been served
	// (pulled.go): the cache serves an artifact to others only after the
	// registry served them its manifest.
	pulled pulledBy
	// chartProofs are the locked charts each namespace's credentials
	// were shown to read: the chart cache serves a chart to a Stack only
	// then (source.Access).
	chartProofs *source.Proofs
	// runs are the applies and destroys under way: Run waits for them
	// before it returns.
	runs inflight
	// pushes are the pushes the receiver was told of (nil: no receiver).
	pushes Pushes
}

// errStopping: the controller is stopping, and starts no apply.
var errStopping = errors.New("the controller is stopping: not applied")

// stackVersions remembers the resourceVersion of each Stack's last status
// write. The informer's copy can lag that write: a reconcile queued
// meanwhile (a requeue due while the last one ran) would otherwise decide
// on the status before it (no failure counted, the plan not yet applied)
// and apply the failed plan again.
type stackVersions struct{ m sync.Map }

// get reads the Stack from the cache, and from the API server when the
// cache's copy is not the one the last status write left.
func (v *stackVersions) get(ctx context.Context, cached, api client.Reader, key client.ObjectKey, st *v1alpha1.Stack) error {
	if err := cached.Get(ctx, key, st); err != nil {
		return err
	}
	if want, ok := v.m.Load(key); ok && want.(string) != st.ResourceVersion {
		return api.Get(ctx, key, st)
	}
	return nil
}

// wrote records the resourceVersion a status write returned ("" forgets
// it: the write failed, or the Stack is gone).
func (v *stackVersions) wrote(key client.ObjectKey, resourceVersion string) {
	if resourceVersion == "" {
		v.m.Delete(key)
		return
	}
	v.m.Store(key, resourceVersion)
}

// outcome is what one reconcile decided.
type outcome struct {
	// result labels the reconciles metric.
	result  string
	requeue time.Duration
	// err makes controller-runtime retry with backoff.
	err error
	// cacheFault: err is a fault of the controller's cache (a read-only
	// or full disk), not of the Stack: it is retried at most
	// cacheFaultRetry apart, so that a restored cache is used soon.
	cacheFault bool
}

// cacheFaultRetry caps the backoff of a Stack that failed on the
// controller's cache, whatever its interval.
const cacheFaultRetry = 15 * time.Second

func (r *reconciler) dirs() (stacks, charts, tmp string) {
	return filepath.Join(r.opts.CacheDir, "stacks"), filepath.Join(r.opts.CacheDir, "charts"), filepath.Join(r.opts.CacheDir, "tmp")
}

// Reconcile observes the Stack, decides, acts, and records its status.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	start := time.Now()
	var st v1alpha1.Stack
	if err := r.written.get(ctx, r.client, r.reader, req.NamespacedName, &st); err != nil {
		if apierrors.IsNotFound(err) {
			r.written.wrote(req.NamespacedName, "")
			r.metrics.setReleases(req.String(), nil)
			r.backoff.forget(req)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	interval := r.interval(&st)
	r.backoff.capAt(req, interval)
	if !st.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, &st)
	}
	if err := r.addFinalizer(ctx, &st); err != nil {
		return reconcile.Result{}, err
	}
	orig := st.DeepCopy()
	pctx, pr := withProgress(ctx, r.client, orig)
	var ws []warning
	if msg := r.intervalWarning(&st); msg != "" {
		ws = append(ws, warning{ReasonIntervalClamped, msg})
	}
	out := r.reconcile(pctx, &st, &ws)
	pr.stop()
	setWarnings(&st, ws)
	if out.cacheFault {
		r.backoff.capAt(req, min(interval, cacheFaultRetry))
	}
	if d := r.awaited(&st); d != "" && out.err == nil {
		// Notified of a push the registry does not serve under the tag
		// yet: soon again, not at the interval.
		out.requeue = pushRetry
	}
	r.stripStatusPaths(&st)
	recordApproval(&st)
	notify := r.sendNotices(&st, out.result)
	st.Status.ObservedGeneration = st.Generation
	if err := r.client.Status().Patch(ctx, &st, client.MergeFrom(pr.Base())); err != nil {
		r.written.wrote(req.NamespacedName, "")
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		out.err = errors.Join(out.err, fmt.Errorf("convoy.dev/v1alpha1 Stack %s status: %w", req, err))
	} else {
		r.written.wrote(req.NamespacedName, st.ResourceVersion)
		notify()
	}
	r.cache.Evict()
	r.metrics.setReleases(req.String(), releaseCounts(st.Status.Releases))
	r.metrics.reconciles.WithLabelValues(out.result).Inc()
	r.metrics.duration.WithLabelValues("total").Observe(time.Since(start).Seconds())
	if out.err != nil {
		return reconcile.Result{}, out.err
	}
	return reconcile.Result{RequeueAfter: out.requeue}, nil
}

func releaseCounts(rs []v1alpha1.ReleaseStatus) map[string]int {
	out := map[string]int{}
	for _, r := range rs {
		out[r.Status]++
	}
	return out
}

// reconcile observes the Stack (its spec, its source pulled, its inputs
// read, its stack opened), then loops: next decides from what is known,
// an act does it, until a step ends the reconcile. What in the spec works
// but should change is added to ws.
func (r *reconciler) reconcile(ctx context.Context, st *v1alpha1.Stack, ws *[]warning) outcome {
	sr, out, ok := r.observe(ctx, st, ws)
	if !ok {
		return out
	}
	defer sr.close()
	f := facts{observed: observed{Stack: st, Inputs: sr.in.hash, Interval: r.interval(st), Now: time.Now()}}
	for range maxSteps {
		s := next(f)
		if s.Replan {
			f.replans++
		}
		var end *outcome
		switch s.Kind {
		case stepPlan:
			end = r.plan(ctx, sr, &f)
		case stepApply:
			end = r.apply(ctx, sr, s.Plan, &f)
		case stepRecheck:
			end = r.recheck(ctx, sr, s.Plan, &f)
		default:
			return r.finish(sr, s, f)
		}
		if end != nil {
			return *end
		}
	}
	// next ends every path within maxSteps (TestNextEndsWithinMaxSteps).
	return r.failed(sr, nil, v1alpha1.ReasonPlanFailed, fmt.Errorf("the reconcile did not settle in %d steps", maxSteps))
}

// observe checks the Stack's spec, pulls its source (verified when
// spec.verify says so), reads its inputs and opens its stack: the facts
// every later step starts from. ok is false when the reconcile ends here,
// with out.
func (r *reconciler) observe(ctx context.Context, st *v1alpha1.Stack, ws *[]warning) (_ *stackRun, out outcome, ok bool) {
	if err := st.Spec.DecodeError(); err != nil {
		return nil, r.stall(st, v1alpha1.ReasonInvalid, err.Error()+" (the CRD's schema now rejects this: correct the Stack)"), false
	}
	if st.Spec.Suspend {
		ready(st, metav1.ConditionFalse, v1alpha1.ReasonSuspended, "spec.suspend is true: nothing is planned or applied")
		return nil, outcome{result: "suspended"}, false
	}
	if err := r.refsAllowed(st); err != nil {
		return nil, r.stall(st, v1alpha1.ReasonInvalid, err.Error()), false
	}
	if st.Spec.Source == "" {
		// Not an error: a Pipeline pins the Stack (spec.source) when a
		// digest reaches its stage, and that change is a new generation.
		msg := "spec.source is empty: the Stack waits for a Pipeline to pin it to a digest (or set spec.source)"
		if p, ok := v1alpha1.PipelineOwner(st); ok {
			msg = fmt.Sprintf("spec.source is empty: the Stack waits for Pipeline %s to pin it to a digest", p)
		}
		ready(st, metav1.ConditionFalse, v1alpha1.ReasonNoSource, msg)
		return nil, outcome{result: "nosource"}, false
	}
	var adm admitted
	var admErr error
	t := time.Now()
	sr, err := r.openStack(ctx, st, func(reg artifact.Registry) (string, error) {
		adm, admErr = r.admitSource(ctx, st, reg)
		t = time.Now()
		return adm.src, admErr
	})
	if admErr != nil {
		out, _ := r.refused(st, admErr)
		return nil, out, false
	}
	if err != nil {
		return nil, r.openFailed(st, err), false
	}
	r.metrics.duration.WithLabelValues("fetch").Observe(time.Since(t).Seconds())
	f := sr.fetched
	st.Status.Source = &v1alpha1.SourceStatus{Ref: f.Ref.String(), Digest: f.Digest, VerifiedBy: adm.verifiedBy}
	if msg := sensitiveVarsWarning(st, sr.cfg.Variables); msg != "" {
		*ws = append(*ws, warning{ReasonSensitiveVars, msg})
	}
	keep := false
	defer func() {
		if !keep {
			sr.close()
		}
	}()
	if out, wait := r.retryGate(sr); wait {
		return nil, out, false
	}
	if err := sr.open(ctx, true); err != nil {
		return nil, r.failed(sr, nil, v1alpha1.ReasonPlanFailed, err), false
	}
	if out, dup := r.checkDuplicate(ctx, sr); dup {
		return nil, out, false
	}
	keep = true
	return sr, outcome{}, true
}

// openFailed records why openStack failed: a source that could not be
// pulled is retried with backoff (soon, when the controller's cache
// failed), files that are not valid HCL and inputs the Stack names wrongly
// stall it, inputs that could not be read are retried.
func (r *reconciler) openFailed(st *v1alpha1.Stack, err error) outcome {
	var se *sourceError
	var pe *parseError
	var ce *configError
	switch {
	case errors.As(err, &se) && se.pull:
		fault := r.cacheFault(err)
		msg := "spec.source: " + err.Error() + credentialHint(st, err)
		if fault {
			msg += cacheFaultHint
		}
		st.Status.LastError = msg
		retrying(st, v1alpha1.ReasonSourceFailed, msg)
		r.event(st, corev1.EventTypeWarning, v1alpha1.ReasonSourceFailed, "Fetch", msg)
		return outcome{result: "error", err: errors.New(msg), cacheFault: fault}
	case errors.As(err, &se):
		return r.retryLater(st, v1alpha1.ReasonSourceFailed, se.err)
	case errors.As(err, &pe), errors.As(err, &ce):
		return r.stall(st, v1alpha1.ReasonInvalid, err.Error())
	}
	return r.retryLater(st, v1alpha1.ReasonPlanFailed, err)
}

// runOptions are the run options of a Stack's pulled source, its files as
// parsed and its inputs.
func (r *reconciler) runOptions(st *v1alpha1.Stack, f *artifact.Fetched, cfg *config.Config, in *inputs) run.Options {
	_, chartsDir, _ := r.dirs()
	return run.Options{
		// Confined: the stack reads only its artifact's files, and its
		// cluster blocks only the kubeconfigs of spec.clusters.
		Source: run.Source{Dir: f.Dir, Root: f.Root, Variables: in.vars, Environment: st.Spec.Environment, Config: cfg},
		Clusters: run.ClusterOptions{
			Kubeconfig: r.opts.Kubeconfig, Context: r.opts.Context, Kubeconfigs: in.kubeconfigs, Confined: true,
			QPS: r.opts.QPS, Burst: r.opts.Burst, StorageDriver: storageDriver(st), SQLConnection: in.sqlConnection, Warnings: r.opts.Warnings, Budget: r.budget,
			Traffic: r.traffic, Connections: r.conns,
			Impersonate: r.opts.impersonating(st), Namespaces: []string{st.Namespace},
		},
		ChartCache:  chartsDir,
		Parallelism: r.opts.Parallelism,
		// Its records name the Stack's namespace; releases another
		// namespace's Stack wrote are never taken over.
		StackNamespace: st.Namespace,
		// A Stack acting as its namespace's service account is a stack of
		// its namespace: another namespace's Stack of the same stack ID is
		// another stack, with a lock of its own (tenancy.go).
		IdentityNamespace: r.opts.identityNamespace(st),
		Announce:          func(msg string) { r.event(st, corev1.EventTypeNormal, "Announce", "Lock", in.redact(msg)) },
	}
}

// stackKey names a Stack in the reconciler's maps: namespace/name.
func stackKey(st *v1alpha1.Stack) string { return st.Namespace + "/" + st.Name }

// mayApply says whether the Stack's pending plan may be applied now:
// never while policies deny it, whatever the approval mode; once approved
// by spec.approvals.required users when it needs approval (manual, a
// policy override, a drift fix of an auto Stack without drift
// correction).
func mayApply(st *v1alpha1.Stack, p *v1alpha1.PlanStatus) bool {
	if len(deniedStill(st, p)) > 0 {
		return false
	}
	if !needsApproval(st, p) {
		return true
	}
	_, ok := approvalOf(st, p.Digest)
	return ok
}

// finish records the step that ends the reconcile.
func (r *reconciler) finish(sr *stackRun, s step, f facts) outcome {
	st := sr.st
	switch s.Kind {
	case stepWait:
		return r.waiting(sr, s.Plan, s.Requeue)
	case stepUpToDate:
		st.Status.LastError, st.Status.LastFailedPlan = "", ""
		clearRetries(st)
		st.Status.Releases = releasesOfPlan(f.fresh.plan)
		setCond(st, v1alpha1.CondApprovalRequired, metav1.ConditionFalse, v1alpha1.ReasonUpToDate, "nothing to apply")
		ready(st, metav1.ConditionTrue, v1alpha1.ReasonUpToDate, "the live releases match the stack "+sr.fetched.Ref.String())
		return outcome{result: "uptodate", requeue: f.Interval}
	case stepRefused:
		st.Status.LastFailedPlan = s.Plan.Digest
		return r.stall(st, v1alpha1.ReasonInvalid, message(f.fresh.foreign, f.fresh.plan, sr.in))
	case stepPolicyDenied:
		denied := deniedStill(st, s.Plan)
		r.event(st, corev1.EventTypeWarning, ReasonPolicyDenied, "Plan", fmt.Sprintf("plan %s is denied by %s", s.Plan.Digest, strings.Join(denied, ", ")))
		return r.policyDenied(sr, s.Plan, denied, s.Requeue)
	case stepRetryStale:
		retrying(st, v1alpha1.ReasonStale, f.stale)
		return outcome{result: "stale", requeue: 5 * time.Second}
	case stepSavedGone:
		return r.applyErrored(sr, nil, f.goneDigest, planstore.ErrSavedPlanGone)
	case stepHold:
		return outcome{result: "error", requeue: s.Requeue}
	case stepIdle:
		return outcome{result: "idle", requeue: s.Requeue}
	}
	panic("stack: finish of step " + s.Kind.String())
}

// plan computes and stores a new plan (facts.fresh), recording it in the
// Stack's status; a plan that cannot be computed or stored ends the
// reconcile.
func (r *reconciler) plan(ctx context.Context, sr *stackRun, f *facts) *outcome {
	st := sr.st
	planning(ctx, sr.fetched.Ref.String())
	t := time.Now()
	var req run.PlanRequest
	if _, wrote := r.wrote.LoadAndDelete(stackKey(st)); !wrote {
		// Records and live objects as the shared informers hold them,
		// without a list request. Releases proven unchanged are then
		// observed by what convoy's manager applied (metadata), not by
		// their content (full objects, a list per kind): the check before
		// an apply still names an object deleted, recreated or edited by
		// another manager since the plan (docs/controller.md, Limits).
		req.Lists, req.Observe = run.ListShared, run.ObserveMetadata
	}
	planned, err := sr.session.Plan(ctx, req)
	r.metrics.duration.WithLabelValues("plan").Observe(time.Since(t).Seconds())
	var foreign *plan.ForeignError
	if err != nil && !errors.As(err, &foreign) {
		// The kept connections may be what failed (a rotated
		// credential, a moved server): the next run connects afresh.
		r.conns.Forget()
		out := r.planFailed(ctx, sr, err)
		return &out
	}
	p := planned.Plan
	ended := func(out outcome) *outcome { return &out }
	// The stack's artifact is named by digest, not embedded: the
	// registry (and the cache) hold it already.
	file, err := run.EncodePlanOfArtifact(planned, run.StackArtifact{Source: sr.fetched.Ref.String(), Digest: sr.fetched.Digest})
	if err != nil {
		return ended(r.failed(sr, p, v1alpha1.ReasonPlanFailed, err))
	}
	digest := planstore.Digest(file)
	var text, md bytes.Buffer
	if err := view.Text(&text, p); err != nil {
		return ended(r.failed(sr, p, v1alpha1.ReasonPlanFailed, err))
	}
	if err := view.Markdown(&md, p); err != nil {
		return ended(r.failed(sr, p, v1alpha1.ReasonPlanFailed, err))
	}
	var tooLarge *planstore.PlanTooLargeError
	if err := planstore.Store(ctx, r.client, r.scheme, st, file, digest, sr.in.redact(text.String()), sr.in.redact(md.String()), r.opts.maxPlanSize()); errors.As(err, &tooLarge) {
		return ended(r.stall(st, v1alpha1.ReasonPlanTooLarge, err.Error()))
	} else if err != nil {
		return ended(r.failed(sr, p, v1alpha1.ReasonPlanFailed, err))
	}
	sum := p.Summary()
	ps := &v1alpha1.PlanStatus{
		Digest: digest, Summary: strings.TrimSuffix(strings.TrimPrefix(sum.String(), "Plan: "), "."), HasChanges: p.HasChanges(),
		Drifted: driftedObjects(p), DriftOnly: isDriftOnly(p), DeniedBy: p.DeniedPolicies(),
		ConfigMapRef: &v1alpha1.LocalObjectReference{Name: planstore.ObjectName(st.Name)},
		SourceDigest: sr.fetched.Digest, Inputs: sr.in.hash, CreatedAt: &metav1.Time{Time: time.Now()},
	}
	ps.Changes = planChanges(p)
	st.Status.Plan = ps
	st.Status.LastReconcileTime = ps.CreatedAt
	setCond(st, v1alpha1.CondPlanned, metav1.ConditionTrue, v1alpha1.ReasonPlanned, fmt.Sprintf("plan %s: %s", digest, ps.Summary))
	if ps.Drifted > 0 {
		setCond(st, v1alpha1.CondDrifted, metav1.ConditionTrue, v1alpha1.ReasonDrifted, driftMessage(p))
		r.event(st, corev1.EventTypeWarning, v1alpha1.ReasonDrifted, "Plan", driftMessage(p))
	} else {
		setCond(st, v1alpha1.CondDrifted, metav1.ConditionFalse, v1alpha1.ReasonNoDrift, "no object changed outside convoy")
	}
	if foreign == nil && p.HasChanges() {
		r.event(st, corev1.EventTypeNormal, v1alpha1.ReasonPlanned, "Plan", fmt.Sprintf("plan %s: %s", digest, ps.Summary))
	}
	f.fresh = &freshPlan{Status: ps, Foreign: foreign != nil, plan: p}
	if foreign != nil {
		f.fresh.foreign = foreign
	}
	f.last = foundPlan
	return nil
}

// recheck checks whether what the pending plan observed moved: if not,
// the plan is renewed (foundCurrent), else planned again (foundMoved).
func (r *reconciler) recheck(ctx context.Context, sr *stackRun, p *v1alpha1.PlanStatus, f *facts) *outcome {
	stale, err := r.stale(ctx, sr, p.Digest)
	if err != nil {
		out := r.planFailed(ctx, sr, err)
		return &out
	}
	if stale {
		f.last = foundMoved
		return nil
	}
	p.CreatedAt = &metav1.Time{Time: time.Now()}
	f.last = foundCurrent
	return nil
}

// apply applies exactly the saved plan p. A saved plan that is gone or
// stale is found (foundGone, foundStale), for next to plan again; every
// other end of the apply ends the reconcile.
func (r *reconciler) apply(ctx context.Context, sr *stackRun, p *v1alpha1.PlanStatus, f *facts) *outcome {
	st := sr.st
	digest := p.Digest
	ended := func(out outcome) *outcome { return &out }
	saved, err := r.savedPlan(ctx, sr, digest)
	if errors.Is(err, planstore.ErrSavedPlanGone) {
		f.last, f.goneDigest = foundGone, digest
		return nil
	}
	if err != nil {
		return ended(r.applyErrored(sr, nil, digest, err))
	}
	if !r.runs.start() {
		return &outcome{result: "error", err: errStopping}
	}
	applying(ctx, digest)
	approval := approvalApplied(st, digest)
	note := approvalNote(approval)
	if promoted := r.promotionNote(ctx, st, p.SourceDigest); promoted != "" {
		// Promoted by a Pipeline's manual stage: who approved that
		// goes into the records too.
		note = strings.TrimPrefix(strings.Join([]string{note, promoted}, ", "), ", ")
	}
	t := time.Now()
	// The plan names its stack directory (or carries its snapshot): the
	// session's source gives only the variable values, which must agree
	// with the plan's (run.Session.Verify).
	res, err := sr.session.Apply(ctx, run.ApplyRequest{
		Saved:    saved,
		Plan:     run.PlanRequest{AllowPolicies: allowedFor(st, digest)},
		Command:  fmt.Sprintf("convoy controller (Stack %s/%s)", st.Namespace, st.Name),
		Progress: applyProgress(ctx, digest),
		Atomic:   st.Spec.Atomic,
		Note:     note,
	})
	r.runs.done()
	r.metrics.duration.WithLabelValues("apply").Observe(time.Since(t).Seconds())
	var applied *plan.Plan
	if res != nil {
		applied = res.Plan
	}
	// An apply that may have installed or removed kinds (CRDs) leaves the
	// kept connections' discovery stale: templates must see them in the
	// next plan. So does a failed one, whose connection may be what
	// failed. Any other keeps them: at fleet scale, a connection dropped
	// after every apply was a connection and its discovery per Stack.
	if err != nil || applied == nil || applied.ChangesServedKinds() {
		r.conns.Forget()
	}
	// The shared informers may not have seen its writes yet: the next
	// plan of this Stack lists directly.
	r.wrote.Store(stackKey(st), true)
	var se *run.StaleError
	var le *stacklock.HeldError
	var pe *plan.PolicyError
	switch {
	case errors.As(err, &pe):
		// The saved plan's denials are not all overridden: never applied.
		ps := st.Status.Plan
		if ps == nil || ps.Digest != digest {
			ps = &v1alpha1.PlanStatus{Digest: digest, Summary: applied.Summary().String()}
		}
		return ended(r.policyDenied(sr, ps, pe.Policies, r.interval(st)))
	case errors.As(err, &se):
		msg := sr.in.redact(fmt.Sprintf("plan %s is stale, planning again: %s", digest, se.Error()))
		r.event(st, corev1.EventTypeNormal, v1alpha1.ReasonStale, "Apply", msg)
		f.last, f.stale = foundStale, msg
		return nil
	case errors.As(err, &le):
		return ended(r.locked(st, "Apply", le))
	case err != nil && (res == nil || len(res.Releases) == 0):
		return ended(r.applyErrored(sr, applied, digest, err))
	}
	if res != nil {
		st.Status.Releases = releasesOfResults(res)
	}
	if err == nil && res != nil && res.Failed() {
		err = stepErrors(res)
	}
	if err != nil {
		return ended(r.applyFailed(sr, applied, digest, err))
	}
	return ended(r.applied(sr, applied, digest, p.DriftOnly, approval))
}

// applied records a plan applied.
func (r *reconciler) applied(sr *stackRun, p *plan.Plan, digest string, driftOnly bool, approval *v1alpha1.ApprovalStatus) outcome {
	st := sr.st
	st.Status.LastAppliedPlan = digest
	st.Status.LastAppliedApproval = approval
	clearRetries(st)
	st.Status.LastError, st.Status.LastFailedPlan = "", ""
	if ps := st.Status.Plan; ps != nil && ps.Digest == digest {
		ps.Summary = appliedSummary(p)
	}
	msg := fmt.Sprintf("applied plan %s from %s", digest, sr.fetched.Ref)
	if note := approvalNote(approval); note != "" {
		msg += ", " + note
	}
	setCond(st, v1alpha1.CondApprovalRequired, metav1.ConditionFalse, v1alpha1.ReasonApplied, msg)
	switch c := findCond(st, v1alpha1.CondDrifted); {
	case driftOnly:
		setCond(st, v1alpha1.CondDrifted, metav1.ConditionFalse, v1alpha1.ReasonDriftCorrected, "drift corrected by plan "+digest)
		note := "drift corrected by plan " + digest
		if approval != nil {
			note += ", " + approvalNote(approval)
		}
		r.event(st, corev1.EventTypeNormal, v1alpha1.ReasonDriftCorrected, "Apply", note)
	case c != nil && c.Status == metav1.ConditionTrue:
		// The plan set every object it found changed (after a failed
		// apply, a rollback's plan finds the failed revision's objects
		// so): nothing differs from what convoy applied any more, and
		// the drift is not reported as standing (no Drifted notice).
		setCond(st, v1alpha1.CondDrifted, metav1.ConditionFalse, v1alpha1.ReasonDriftCorrected, "the objects changed outside the last deployed revision were set by plan "+digest)
		r.event(st, corev1.EventTypeNormal, v1alpha1.ReasonApplied, "Apply", msg)
	default:
		r.event(st, corev1.EventTypeNormal, v1alpha1.ReasonApplied, "Apply", msg)
	}
	ready(st, metav1.ConditionTrue, v1alpha1.ReasonApplied, msg)
	return outcome{result: "applied", requeue: r.interval(st)}
}

// waiting records a plan that waits: for approval, or, drift only
// without drift correction, for nothing. Ready's reason is Drifted for a
// plan that only restores drift (whatever the approval mode: the drift is
// what the Stack's objects say), ApprovalRequired for any other; its
// message names both when both hold.
func (r *reconciler) waiting(sr *stackRun, p *v1alpha1.PlanStatus, requeue time.Duration) outcome {
	st := sr.st
	if denied := deniedStill(st, p); len(denied) > 0 {
		return r.policyDenied(sr, p, denied, requeue)
	}
	clearError(st)
	drift := fmt.Sprintf("%d %s changed outside convoy", p.Drifted, plural(p.Drifted, "object", "objects"))
	if p.DriftOnly && st.Spec.Approval != v1alpha1.ApprovalManual {
		msg := fmt.Sprintf("%s; spec.driftCorrection is false: plan %s restores them when approved (convoy approve %s -n %s)", drift, p.Digest, st.Name, st.Namespace)
		setCond(st, v1alpha1.CondApprovalRequired, metav1.ConditionFalse, v1alpha1.ReasonDrifted, "drift is reported, not corrected")
		ready(st, metav1.ConditionFalse, v1alpha1.ReasonDrifted, msg)
		return outcome{result: "drifted", requeue: requeue}
	}
	msg := approvalWaits(st, p)
	reason := v1alpha1.ReasonApprovalRequired
	if st.Spec.ApprovedPlan != "" && st.Spec.ApprovedPlan != p.Digest && st.Spec.ApprovedPlan != st.Status.LastAppliedPlan {
		reason = v1alpha1.ReasonApprovalMismatch
		msg = fmt.Sprintf("spec.approvedPlan %s is not the current plan %s (%s): nothing applied", st.Spec.ApprovedPlan, p.Digest, p.Summary)
		r.event(st, corev1.EventTypeWarning, reason, "Approve", msg)
	}
	setCond(st, v1alpha1.CondApprovalRequired, metav1.ConditionTrue, reason, msg)
	readyReason, readyMsg := v1alpha1.ReasonApprovalRequired, msg
	switch {
	case p.DriftOnly:
		readyReason, readyMsg = v1alpha1.ReasonDrifted, drift+"; spec.driftCorrection is false and approval is manual: "+msg
	case p.Drifted > 0:
		readyMsg = msg + "; it also restores " + drift
	}
	ready(st, metav1.ConditionFalse, readyReason, readyMsg)
	return outcome{result: "approval_required", requeue: requeue}
}

// stale reports whether the saved plan's observations no longer hold.
func (r *reconciler) stale(ctx context.Context, sr *stackRun, digest string) (bool, error) {
	saved, err := r.savedPlan(ctx, sr, digest)
	if errors.Is(err, planstore.ErrSavedPlanGone) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	err = sr.session.Verify(ctx, saved)
	var se *run.StaleError
	if errors.As(err, &se) {
		r.event(sr.st, corev1.EventTypeNormal, v1alpha1.ReasonStale, "Verify", sr.in.redact("plan "+digest+": "+se.Error()))
		return true, nil
	}
	return false, err
}

// savedPlan reads the saved plan of digest from its Secret (and parts).
// A plan that names its stack by digest is applied from the stack pulled
// for this reconcile when it is that digest, else from the artifact
// pulled again (verified by digest).
func (r *reconciler) savedPlan(ctx context.Context, sr *stackRun, digest string) (*run.SavedPlan, error) {
	file, err := planstore.Load(ctx, r.reader, sr.st, digest)
	var pe *planstore.PartError
	if errors.As(err, &pe) {
		r.event(sr.st, corev1.EventTypeWarning, v1alpha1.ReasonStale, "Verify", "plan "+digest+": "+err.Error())
	}
	if err != nil {
		return nil, err
	}
	saved, err := run.DecodePlan(file, fmt.Sprintf("v1 Secret %s/%s", sr.st.Namespace, planstore.ObjectName(sr.st.Name)))
	if err != nil {
		return nil, err
	}
	snap, o := saved.Stack, saved.Origin
	if !snap.ByReference() || o == nil {
		return saved, nil
	}
	if snap.Digest == sr.fetched.Digest {
		o.Dir = sr.fetched.Dir
		return saved, nil
	}
	if _, err := os.Stat(o.Dir); err == nil {
		return saved, nil
	}
	stacksDir, _, _ := r.dirs()
	reg := r.registry
	res, creds, drop, err := r.sourceResolver(ctx, sr.st, sr.tmp)
	if err != nil {
		return nil, err
	}
	defer drop()
	reg.Resolver = res
	f, release, err := r.fetch(ctx, reg, creds, stacksDir, snap.Source)
	if err != nil {
		return nil, fmt.Errorf("the saved plan's stack %s: %w", snap.Source, err)
	}
	sr.held = append(sr.held, release)
	if f.Digest != snap.Digest {
		return nil, fmt.Errorf("the saved plan's stack %s was pulled as %s", snap.Source, f.Digest)
	}
	o.Dir = f.Dir
	return saved, nil
}

// stepErrors joins the failed steps' errors, one line per release.
func stepErrors(res *run.Applied) error {
	var lines []string
	for _, o := range res.Releases {
		if o.Step == dag.Failed && o.Err != nil {
			lines = append(lines, fmt.Sprintf("%s: %v", o.Addr, o.Err))
		}
	}
	// spec.atomic: what was undone, and what could not be.
	for _, o := range res.Releases {
		switch {
		case o.Restored && o.PreviousDeployed == 0:
			lines = append(lines, fmt.Sprintf("%s: restored (atomic): uninstalled", o.Addr))
		case o.Restored:
			lines = append(lines, fmt.Sprintf("%s: restored (atomic) as revision %d", o.Addr, o.Revision))
		case o.RestoreErr != nil:
			lines = append(lines, fmt.Sprintf("%s: restoring failed (atomic): %v", o.Addr, o.RestoreErr))
		}
	}
	return errors.New(strings.Join(lines, "\n"))
}

// failed records an error: a stack at fault stalls, the rest is retried
// with backoff.
func (r *reconciler) failed(sr *stackRun, p *plan.Plan, reason string, err error) outcome {
	msg := message(err, p, sr.in)
	var de *run.DiagnosticsError
	var fe *plan.ForeignError
	if errors.As(err, &de) || errors.As(err, &fe) {
		return r.stall(sr.st, v1alpha1.ReasonInvalid, msg)
	}
	if m, ok := forbiddenMessage(err, msg); ok {
		// The Stack's identity may not do what the stack asks: nothing
		// of the plan is applied; tried again with backoff, since a
		// Role granted meanwhile is no change of the Stack.
		reason, msg = v1alpha1.ReasonForbidden, m
	}
	fault := r.cacheFault(err)
	if fault {
		msg += cacheFaultHint
	}
	sr.st.Status.LastError = msg
	retrying(sr.st, reason, msg)
	r.event(sr.st, corev1.EventTypeWarning, reason, "Reconcile", msg)
	return outcome{result: "error", err: errors.New(msg), cacheFault: fault}
}

// retryLater records an error before the Stack's inputs are read: it is
// retried with backoff.
func (r *reconciler) retryLater(st *v1alpha1.Stack, reason string, err error) outcome {
	msg := err.Error()
	if m, ok := forbiddenMessage(err, msg); ok {
		reason, msg = v1alpha1.ReasonForbidden, m // the Stack's identity may not read what it names
	}
	fault := r.cacheFault(err)
	if fault {
		msg += cacheFaultHint
	}
	st.Status.LastError = msg
	retrying(st, reason, msg)
	return outcome{result: "error", err: errors.New(msg), cacheFault: fault}
}

// forbiddenMessage is msg, the message of err, when err is an
// authorizer's refusal (a *kube.ForbiddenError, or the API server's text
// of one that reached here as it was): every refusal in the form `who may
// not do what`, each line once (one list refused to several reads of a
// plan). ok is false for any other error.
func forbiddenMessage(err error, msg string) (string, bool) {
	var forbidden *kube.ForbiddenError
	msg, rewritten := kube.Refusals(msg)
	if !rewritten && !errors.As(err, &forbidden) {
		return "", false
	}
	var lines []string
	seen := map[string]bool{}
	for _, l := range strings.Split(msg, "\n") {
		if !seen[l] {
			seen[l] = true
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n"), true
}

// cacheFaultHint ends the message of a fault of the controller's cache.
const cacheFaultHint = " (the controller's cache directory, --cache-dir, failed: retried at most 15s apart)"

// cacheFault says whether err is a file operation in the controller's
// cache directory that failed.
func (r *reconciler) cacheFault(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	var path string
	switch {
	case errors.As(err, &pe):
		path = pe.Path
	case errors.As(err, &le):
		path = le.New
	default:
		return false
	}
	return within(r.opts.CacheDir, path)
}

// within says whether path is dir or under it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// stall records a Stack that cannot progress until its spec or inputs
// change; it is looked at again at its interval.
func (r *reconciler) stall(st *v1alpha1.Stack, reason, msg string) outcome {
	st.Status.LastError = msg
	stalled(st, reason, msg)
	r.event(st, corev1.EventTypeWarning, reason, "Reconcile", msg)
	return outcome{result: "error", requeue: r.interval(st)}
}

// message renders an error for status and events: diagnostics with
// their source positions, sensitive values masked.
func message(err error, p *plan.Plan, in *inputs) string {
	var de *run.DiagnosticsError
	if errors.As(err, &de) {
		var b bytes.Buffer
		if werr := diagtext.Write(&b, de.Diags, de.Files, false); werr == nil {
			return in.redact(p.Redactor().Text(strings.TrimSpace(b.String())))
		}
	}
	return in.redact(p.Redactor().Text(err.Error()))
}

// diagText renders diagnostics with their source positions.
func diagText(diags hcl.Diagnostics, cfg *config.Config) string {
	var files map[string]*hcl.File
	if cfg != nil {
		files = cfg.Files
	}
	var b bytes.Buffer
	if err := diagtext.Write(&b, diags, files, false); err != nil {
		return diags.Error()
	}
	return strings.TrimSpace(b.String())
}

func (r *reconciler) event(st *v1alpha1.Stack, typ, reason, action, note string) {
	if r.events != nil {
		note = r.stripCachePaths(note)
		if len(note) > 1000 {
			note = note[:1000] + "…"
		}
		r.events.Eventf(st, nil, typ, reason, action, "%s", note)
	}
}

// isDriftOnly: every release the plan changes changes only because live
// objects drifted.
func isDriftOnly(p *plan.Plan) bool {
	changed := false
	for _, rc := range p.Releases {
		if rc.Action == plan.ActionNoOp {
			continue
		}
		changed = true
		if len(rc.Reasons) == 0 || slices.ContainsFunc(rc.Reasons, func(r plan.Reason) bool { return r.Kind != plan.ReasonDrift }) {
			return false
		}
	}
	return changed
}

// driftedObjects counts the live objects changed outside convoy, each
// once (plan.ReleaseChange.Drifted).
func driftedObjects(p *plan.Plan) int {
	n := 0
	for _, rc := range p.Releases {
		n += rc.Drifted
	}
	return n
}

func driftMessage(p *plan.Plan) string {
	var parts []string
	for _, rc := range p.Releases {
		for _, d := range rc.Drift {
			parts = append(parts, fmt.Sprintf("%s: %s", rc.Addr, d.Ref))
		}
		if len(rc.Drift) > 0 {
			continue
		}
		for _, reason := range rc.Reasons {
			if reason.Kind == plan.ReasonDrift {
				parts = append(parts, fmt.Sprintf("%s: %s", rc.Addr, reason.Detail))
			}
		}
	}
	return "drift: " + strings.Join(parts, "; ")
}

func releasesOfPlan(p *plan.Plan) []v1alpha1.ReleaseStatus {
	var out []v1alpha1.ReleaseStatus
	for _, rc := range p.Releases {
		if rc.Action == plan.ActionUninstall {
			continue
		}
		out = append(out, v1alpha1.ReleaseStatus{Address: rc.Addr.String(), Name: rc.Name, Namespace: rc.Namespace, Cluster: rc.Cluster, Revision: rc.Observed.LastRevision, Status: rc.Observed.LastStatus})
	}
	return out
}

func releasesOfResults(res *run.Applied) []v1alpha1.ReleaseStatus {
	var out []v1alpha1.ReleaseStatus
	for _, o := range res.Releases {
		if o.Result == run.ResultUninstalled {
			continue
		}
		// A release whose step did not succeed shows how it ended,
		// whatever record it left.
		status := o.Status
		if o.Step != dag.Succeeded {
			status = string(o.Step)
		}
		out = append(out, v1alpha1.ReleaseStatus{Address: o.Addr, Name: o.Name, Namespace: o.Namespace, Cluster: o.Cluster, Revision: o.Revision, Status: status})
	}
	return out
}

// planChanges are the plan's changing releases as "ACTION ADDRESS", at
// most v1alpha1.MaxPlanChanges (the last one then says how many more).
func planChanges(p *plan.Plan) []string {
	var out []string
	n := 0
	for _, r := range p.Releases {
		if r.Action == plan.ActionNoOp && len(r.Drift) == 0 {
			continue
		}
		n++
		if len(out) < v1alpha1.MaxPlanChanges {
			what := string(r.Action)
			if r.Action == plan.ActionNoOp {
				what = "restore drift of"
			}
			out = append(out, what+" "+r.Addr.String())
		}
	}
	if n > len(out) {
		out[len(out)-1] = fmt.Sprintf("… %d more", n-len(out)+1)
	}
	return out
}

// storageDriver is the driver of spec.storage (default: secret); a stack
// block's storage block decides instead.
func storageDriver(st *v1alpha1.Stack) string {
	if st.Spec.Storage != nil && st.Spec.Storage.Driver != "" {
		return st.Spec.Storage.Driver
	}
	return "secret"
}
