package release

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/convoy-sh/convoy/internal/sensitive"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/chart/postrender"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// WaitMode says what a deploy waits for after applying.
type WaitMode int

// Wait modes.
const (
	// WaitNone returns once the objects are applied (Helm without --wait).
	WaitNone WaitMode = iota
	// WaitReady waits until every applied object is ready (--wait).
	WaitReady
	// WaitReadyAndJobs also waits for Jobs to complete (--wait-for-jobs).
	WaitReadyAndJobs
)

// DefaultTimeout is Helm's --timeout default: what a request's zero
// Timeout means. It is convoy's one default release timeout.
const DefaultTimeout = 5 * time.Minute

// Request is one release's desired state. The engine never modifies it.
type Request struct {
	Name      string
	Namespace string
	Chart     *chart.Chart
	// Values are the user-supplied values (stored as the record's config).
	Values          map[string]any
	CreateNamespace bool
	Wait            WaitMode
	// Timeout bounds each wait (hooks, resources); 0 means DefaultTimeout.
	Timeout time.Duration
	// Atomic: a failed install is uninstalled; a failed upgrade is rolled
	// back to the last deployed revision.
	Atomic bool
	// CleanupOnFail: a failed upgrade deletes the objects it created.
	CleanupOnFail bool
	// HistoryMax bounds the revisions kept; 0 keeps all.
	HistoryMax   int
	DisableHooks bool
	// TakeOwnership adopts existing objects not owned by this release.
	TakeOwnership bool
	// ExpandClaims: the plan resizes the existing claims of the release's
	// StatefulSets to their templates' storage (expand_claims); Expand
	// are the resizes it planned.
	ExpandClaims bool
	// IgnoreChanges are fields left to other field managers (an
	// autoscaler's replicas): applied only when their object is created.
	IgnoreChanges kube.IgnoreRules `json:",omitempty"`
	// PostRender changes the rendered manifests (patches, an exec
	// post-renderer) before anything is planned, applied or recorded: the
	// record stores the result, as with helm --post-renderer.
	PostRender postrender.Spec `json:",omitempty"`
	// Lookups answers the chart's lookups when not nil (a plan's, which
	// reads each object once per plan); else they read the cluster.
	Lookups chart.LookupFunc `json:"-"`
	// Labels are extra labels on the release records (e.g. convoy.dev/stack).
	Labels map[string]string
	// RunID labels the records this operation writes (RunLabel): the id of
	// the stack lock its run holds.
	RunID string
	// Fingerprint is Engine.Fingerprint of the request, set by Prepare
	// (kept in saved plans, whose charts come without their files): the
	// record is labelled with it (FingerprintLabel).
	Fingerprint string `json:",omitempty"`
	// Replace are the objects whose immutable fields change that the plan
	// showed as replaced: apply deletes and creates them
	// (kube.ApplyOptions.Replace). Not saved with a plan: the run that
	// applies sets it from the plan's objects.
	Replace []kube.Ref `json:"-"`
	// Expand are the claims the plan resizes (expand_claims): apply
	// patches them once the release's objects are applied, before the
	// waits. Set from the plan like Replace.
	Expand []kube.ClaimResize `json:"-"`
	// Absent are the objects the plan found absent (its lists): they are
	// not read again, neither for the ownership check nor before their
	// apply, which creates them (kube.ApplyOptions.Create); one created
	// by someone else since is refused as the ownership check refuses it.
	// Not saved with a plan: the run that applies sets it.
	Absent []kube.Ref `json:"-"`
	// Redact masks the sensitive values in text the records keep (a
	// failure's description quotes errors, which quote values); nil keeps
	// the text. Not saved with a plan: the run that applies sets it.
	Redact *sensitive.Redactor `json:"-"`
	// DeleteLast: the objects of the previous revision this one lacks are
	// deleted once the new ones are ready and the post-hooks ran, not as
	// soon as the new ones are applied (a rename replaces the objects
	// named after the release: the old ones serve until then). Not saved
	// with a plan: the run that applies sets it.
	DeleteLast bool `json:"-"`
	// Leftovers are objects no deployed revision has that a failed
	// revision created and the plan showed deleted (planner: a failed or
	// interrupted revision newer than the deployed one): the deploy
	// deletes them with the objects the previous revision had and this
	// one lacks, those that still carry the release's ownership. Not
	// saved with a plan: the run that applies sets it.
	Leftovers []kube.Ref `json:"-"`
	// Health judges the release's custom resources while it waits (its
	// health_check blocks, compiled); nil: kstatus's rules for every
	// kind. Not saved with a plan: the run that applies sets it.
	Health kube.Health `json:"-"`
	// CRDs is what the deploy does with the chart's crds/ (the zero
	// value: CRDsCreate, Helm's behaviour).
	CRDs CRDPolicy `json:",omitempty"`
	// Note is added to the description of the revision a successful
	// deploy records ("Upgrade complete (policies allowed: x)"): what the
	// run overrode. Not saved with a plan: the run that applies sets it.
	Note string `json:"-"`
}

func (r *Request) timeout() time.Duration { return cmp.Or(r.Timeout, DefaultTimeout) }

// Prepared is a release rendered and built against what the cluster holds
// now, not yet applied: what plan shows and what Execute applies.
type Prepared struct {
	Request *Request
	// History is the release's records as observed, oldest first.
	History []*Release
	// Last and Deployed are the newest and the newest deployed record (nil
	// when there is none).
	Last, Deployed *Release
	Revision       int
	IsInstall      bool
	Rendered       *chart.Rendered
	// Objects are the release's objects with Helm's ownership metadata, in
	// install order. Nil when they can only be built after the chart's CRDs
	// are installed (NeedsCRDs).
	Objects   []*unstructured.Unstructured
	NeedsCRDs bool
	// Previous are the objects of the revision this one replaces.
	Previous []*unstructured.Unstructured
	// StoredAPIs are the removed API versions that revision names, its
	// objects read as their successors' (in Previous too).
	StoredAPIs []StoredAPI
	sources    sources
	// joined is the manifest of a large release's record, which its
	// rendered manifests share (chart.Rendered.JoinManifests).
	joined string
}

// Prepare observes the release's records, renders the next revision with
// the cluster's capabilities and live lookups, and builds its objects. It
// changes nothing.
func (e *Engine) Prepare(ctx context.Context, req *Request) (*Prepared, error) {
	history, err := e.history(ctx, req.Namespace, req.Name)
	if err != nil {
		return nil, err
	}
	return e.PrepareWithHistory(ctx, req, history)
}

// PrepareRendered is Prepare for output rendered earlier (a saved plan): the
// records are observed anew, nothing is re-rendered. What is prepared is
// for Execute, which reads of the previous revision's objects (Previous)
// only their identity and annotations: they keep nothing else.
func (e *Engine) PrepareRendered(ctx context.Context, req *Request, rendered *chart.Rendered) (*Prepared, error) {
	history, err := e.history(ctx, req.Namespace, req.Name)
	if err != nil {
		return nil, err
	}
	p, err := e.PrepareRenderedWithHistory(req, history, rendered)
	if p != nil {
		p.Previous = identitiesOnly(p.Previous)
	}
	return p, err
}

// identitiesOnly are objs with their apiVersion, kind, name, namespace
// and annotations only: a large release's previous objects are not held
// whole while its next revision is applied.
func identitiesOnly(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAPIVersion(o.GetAPIVersion())
		u.SetKind(o.GetKind())
		u.SetName(o.GetName())
		u.SetNamespace(o.GetNamespace())
		u.SetAnnotations(o.GetAnnotations())
		out[i] = u
	}
	return out
}

// build parses the rendered objects. Objects of kinds the chart's own crds/
// define cannot be built before those are installed: Execute builds them.
func (e *Renderer) build(p *Prepared, rendered *chart.Rendered) error {
	p.Rendered = rendered
	if err := e.refuseRemovedHooks(rendered.Hooks, p.Request.Namespace); err != nil {
		return err
	}
	objs, src, err := e.buildManifests(rendered.Manifests, p.Request.Namespace)
	if err != nil {
		if IsRemovedAPI(err) {
			return err
		}
		if p.appliesCRDs() {
			p.NeedsCRDs = true
			return nil
		}
		return err
	}
	setOwnership(objs, p.Request.Name, p.Request.Namespace)
	p.Objects, p.sources = objs, src
	return nil
}

// Deploy installs the release, or upgrades it when a revision exists:
// Prepare, then Execute.
func (e *Engine) Deploy(ctx context.Context, req *Request) (*Release, error) {
	p, err := e.Prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	return e.Execute(ctx, p)
}

// Execute applies a prepared release: validate → record pending →
// pre-hooks → apply → wait → post-hooks → record deployed (the previous
// deployed revision superseded). It returns the final record, which says
// what happened also when err is not nil. A release whose records changed
// since Prepare fails (another operation got there first).
func (e *Engine) Execute(ctx context.Context, p *Prepared) (*Release, error) {
	req := p.Request
	store := e.Storage(req.Namespace)
	e.logf(req.Namespace, req.Name, PhaseRendering, "preparing revision %d", p.Revision)
	if err := e.CheckRecordSize(p); err != nil {
		return nil, err
	}
	if err := checkFence(ctx); err != nil {
		return nil, err
	}
	// As Helm: crds/ are installed (never upgraded: the release's crds
	// policy says otherwise) before anything else. Objects of the kinds
	// they define can be built, and so validated, only after that;
	// otherwise the CRDs wait until everything is validated. CRDs a
	// release replaces (create_replace) go first too: the API server
	// judges objects by the CRD it has, and refuses fields only the new
	// one declares.
	crdsInstalled := false
	if p.NeedsCRDs || (req.CRDs == CRDsCreateReplace && p.appliesCRDs()) {
		if err := e.applyCRDs(ctx, p); err != nil {
			return nil, err
		}
		if p.NeedsCRDs {
			if err := e.build(p, p.Rendered); err != nil {
				return nil, err
			}
		}
		p.NeedsCRDs, crdsInstalled = false, true
	}
	objs, src := p.Objects, p.sources
	// Validate against the server before creating or recording anything
	// (the namespace included): an invalid object must leave neither a
	// revision nor a change behind. Objects the release did not own before
	// may be adopted only with take_ownership.
	absent := req.Absent
	if !req.TakeOwnership {
		skip := identities(p.Previous)
		for _, r := range absent {
			skip[idOf(r)] = true
		}
		found, err := e.checkOwnership(ctx, objs, req.Name, req.Namespace, skip)
		if err != nil {
			return nil, err
		}
		absent = append(slices.Clip(absent), found...)
	}
	if err := e.validate(ctx, req, objs, src); err != nil {
		return nil, err
	}
	if p.appliesCRDs() && !crdsInstalled {
		if err := e.applyCRDs(ctx, p); err != nil {
			return nil, err
		}
	}
	if req.CreateNamespace {
		if err := e.kube.EnsureNamespace(ctx, req.Namespace, nil); err != nil {
			return nil, err
		}
	}

	if LargeRendering(p.Rendered) {
		p.joined = p.Rendered.JoinManifests()
	}
	rel := p.record(time.Now())
	if p.Deployed != nil && !small(p.Deployed) {
		// A large deployed record (its manifest and chart, decoded, are
		// about its size again) is not held while the release is
		// applied: it is read again to be superseded.
		p.forgetRecords()
	}
	// Creating revision N fails if anyone created it since Prepare: the
	// per-release lock.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := e.createRecord(ctx, store, rel); err != nil {
		if errors.Is(err, ErrReleaseExists) {
			return nil, fmt.Errorf("release %s revision %d was created by another operation since this one was prepared: %w", req.Name, p.Revision, err)
		}
		return nil, err
	}

	created, runErr := e.perform(ctx, p, rel, absent)
	runErr = whyStopped(ctx, runErr, req.timeout())
	if runErr == nil {
		return rel, e.finishDeployed(ctx, store, p, rel)
	}
	return e.failDeploy(ctx, store, p, rel, created, runErr)
}

// perform runs the cluster-side steps of a deploy of p as rel, creating
// the objects absent lists without reading them. It returns the objects
// this deploy created (for cleanup_on_fail).
func (e *Engine) perform(ctx context.Context, p *Prepared, rel *Release, absent []kube.Ref) ([]kube.Ref, error) {
	req := p.Request
	pre, post := chart.HookPreUpgrade, chart.HookPostUpgrade
	if p.IsInstall {
		pre, post = chart.HookPreInstall, chart.HookPostInstall
	}
	return e.rollout(ctx, rel, rollout{
		pre: pre, post: post, objs: p.Objects, src: p.sources, ignore: req.IgnoreChanges, replace: req.Replace, expand: req.Expand, create: absent, takeOwnership: req.TakeOwnership, previous: p.Previous,
		wait: req.Wait, timeout: req.timeout(), disableHooks: req.DisableHooks, deleteLast: req.DeleteLast, leftovers: req.Leftovers,
		health: req.Health,
	})
}

// rollout is one revision's way onto the cluster, shared by deploys and
// rollbacks.
type rollout struct {
	pre, post      chart.HookEvent
	objs, previous []*unstructured.Unstructured
	src            sources
	ignore         kube.IgnoreRules
	replace        []kube.Ref
	// expand are claims resized once the objects are applied.
	expand []kube.ClaimResize
	// create are objects known absent: applied create-only, unread.
	create []kube.Ref
	// takeOwnership adopts an object of create that exists by then.
	takeOwnership bool
	wait          WaitMode
	timeout       time.Duration
	disableHooks  bool
	// health judges the kinds the release has health checks for.
	health kube.Health
	// deleteLast deletes what the previous revision had and this one
	// lacks at the end, after the waits and the post-hooks.
	deleteLast bool
	// leftovers are objects of failed revisions that neither the previous
	// revision nor this one has: deleted with those the previous one had,
	// each only if it still carries the release's ownership and is not
	// kept (ownedLeftovers).
	leftovers []kube.Ref
}

// rollout runs the pre-hooks, applies the objects, deletes what the
// previous revision had and this one lacks, waits, and runs the
// post-hooks. It returns the objects it created (for cleanup_on_fail).
func (e *Engine) rollout(ctx context.Context, rel *Release, r rollout) ([]kube.Ref, error) {
	if !r.disableHooks {
		if err := e.runHooks(ctx, rel, r.pre, r.timeout); err != nil {
			return nil, err
		}
	}
	e.logf(rel.Namespace, rel.Name, PhaseApplying, "applying %d objects", len(r.objs))
	results, err := e.applyRollout(ctx, rel, r)
	var created []kube.Ref
	for _, res := range results {
		if res.Action == kube.ActionCreated {
			created = append(created, res.Ref)
		}
	}
	if err != nil {
		return created, err
	}
	setAppliedState(e.kube, rel, results)
	if r.src != nil {
		e.setRecordObjectsBuilt(rel, r.objs, r.src)
	} else {
		e.setRecordObjects(rel)
	}
	deleteGone := func() error {
		gone := removed(r.previous, r.objs)
		if len(gone) > 0 {
			e.logf(rel.Namespace, rel.Name, PhaseApplying, "deleting %d objects no longer in the release", len(gone))
		}
		left, err := e.ownedLeftovers(ctx, rel.Name, rel.Namespace, r.leftovers)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			e.logf(rel.Namespace, rel.Name, PhaseApplying, "deleting %d objects failed revisions left over", len(left))
			gone = append(gone, left...)
		}
		if len(gone) == 0 {
			return nil
		}
		if err := checkFence(ctx); err != nil {
			return err
		}
		_, err = e.kube.Delete(ctx, gone, kube.DeleteOptions{Propagation: kube.PropagationBackground})
		return err
	}
	if !r.deleteLast {
		if err := deleteGone(); err != nil {
			return created, err
		}
	}
	if r.wait != WaitNone {
		e.logf(rel.Namespace, rel.Name, PhaseWaiting, "waiting for %d objects to be ready", len(r.objs))
		wctx, cancel := context.WithTimeout(ctx, r.timeout)
		err := e.kube.Wait(wctx, refs(r.objs), kube.WaitOptions{
			WaitForJobs: r.wait == WaitReadyAndJobs,
			Applied:     lives(results),
			Progress: func(ready, total int) {
				e.logf(rel.Namespace, rel.Name, PhaseWaiting, "%d/%d ready", ready, total)
			},
			Blockers: func(objs []kube.ObjectStatus) {
				e.notify(Event{Time: time.Now(), Namespace: rel.Namespace, Release: rel.Name, Phase: PhaseWaiting,
					Message: blockedMessage(objs), Blockers: objs})
			},
			Unreachable: e.outages(rel, PhaseWaiting),
			Health:      r.health,
		})
		cancel()
		if err != nil {
			return created, err
		}
	}
	if !r.disableHooks {
		if err := e.runHooks(ctx, rel, r.post, r.timeout); err != nil {
			return created, err
		}
	}
	if r.deleteLast {
		if err := deleteGone(); err != nil {
			return created, err
		}
	}
	return created, nil
}

// finishDeployed records the success of p deployed as rel: the new
// revision deployed, the previous deployed one superseded, old revisions
// pruned. The writes are retried and may outlive ctx by the engine's grace
// period.
func (e *Engine) finishDeployed(ctx context.Context, store *Storage, p *Prepared, rel *Release) error {
	// Applied, the objects are the cluster's: a large release's parsed
	// objects, about its size again, are not held while its records are
	// written.
	p.Objects, p.Previous = nil, nil
	if previous := p.Deployed; previous != nil {
		whole, err := e.reread(ctx, store, previous)
		if err == nil {
			err = e.writeFinal(ctx, store, whole, StatusSuperseded, previous.Info.Description)
		}
		if err != nil {
			// The new revision stays pending: that is what needs fixing.
			return &RecordError{Name: rel.Name, Namespace: rel.Namespace, Revision: rel.Version, Left: rel.Info.Status, Want: StatusDeployed,
				RunID: rel.Labels[RunLabel], Err: fmt.Errorf("superseding revision %d: %w", previous.Version, errors.Unwrap(err))}
		}
		// Nor are the records read, once written: what is left to do
		// reads their versions (Prunes).
		p.forgetRecords()
	}
	description := "Upgrade complete"
	if p.IsInstall {
		description = "Install complete"
	}
	if p.Request.Note != "" {
		description += " (" + p.Request.Note + ")"
	}
	e.Settle(ctx, p, rel)
	if err := e.writeFinal(ctx, store, rel, StatusDeployed, description); err != nil {
		return err
	}
	e.logf(rel.Namespace, rel.Name, PhaseDone, "revision %d deployed", rel.Version)
	if len(p.Prunes()) == 0 {
		// What was read, and this revision, are within the limit: the
		// records are not listed again to find nothing to prune.
		// Revisions others wrote since are pruned by the next deploy.
		return nil
	}
	return Retry(ctx, e.grace, func(ctx context.Context) error { return store.Prune(ctx, rel.Name, p.Request.HistoryMax) })
}

// failDeploy records the failed deploy of p as rel and then, in this
// order, cleans up (cleanup_on_fail) and rolls back or uninstalls (atomic).
func (e *Engine) failDeploy(ctx context.Context, store *Storage, p *Prepared, rel *Release, created []kube.Ref, cause error) (*Release, error) {
	req, deployed, isInstall := p.Request, p.Deployed, p.IsInstall
	// Recording must happen even when ctx was cancelled (Ctrl-C): the
	// record has to say what happened.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	description := fmt.Sprintf("Upgrade %q failed: %v", rel.Name, cause)
	if isInstall {
		description = fmt.Sprintf("Release %q failed: %v", rel.Name, cause)
	}
	description = req.Redact.Text(description)
	if err := e.writeFinal(ctx, store, rel, StatusFailed, description); err != nil {
		return rel, fmt.Errorf("%w; %w", cause, err)
	}
	e.logf(rel.Namespace, rel.Name, PhaseFailed, "revision %d failed: %v", rel.Version, cause)

	if !isInstall && req.CleanupOnFail && len(created) > 0 {
		if err := checkFence(rctx); err != nil {
			return rel, fmt.Errorf("%w; cleanup on fail not done: %w", cause, err)
		}
		e.logf(rel.Namespace, rel.Name, PhaseRestoring, "cleanup on fail: deleting %d objects this upgrade created", len(created))
		if _, err := e.kube.Delete(rctx, created, kube.DeleteOptions{Propagation: kube.PropagationBackground}); err != nil {
			return rel, fmt.Errorf("%w; cleanup on fail also failed: %v", cause, err)
		}
	}
	if !req.Atomic {
		return rel, cause
	}
	if isInstall {
		e.logf(rel.Namespace, rel.Name, PhaseRestoring, "atomic: uninstalling the failed install")
		if _, err := e.Uninstall(rctx, UninstallRequest{Name: rel.Name, Namespace: rel.Namespace, Timeout: req.timeout(), Wait: true, RunID: req.RunID}); err != nil {
			return rel, fmt.Errorf("release %s failed, and the atomic uninstall also failed: %v; original error: %w", rel.Name, err, cause)
		}
		return rel, fmt.Errorf("release %s failed and was uninstalled (atomic): %w", rel.Name, cause)
	}
	if deployed == nil {
		return rel, fmt.Errorf("upgrade of %s failed and there is no deployed revision to roll back to (atomic): %w", rel.Name, cause)
	}
	e.logf(rel.Namespace, rel.Name, PhaseRestoring, "atomic: rolling back to revision %d", deployed.Version)
	rb, err := e.Rollback(rctx, RollbackRequest{Name: rel.Name, Namespace: rel.Namespace, Revision: deployed.Version, Wait: req.Wait, Timeout: req.timeout(), DisableHooks: req.DisableHooks, IgnoreChanges: req.IgnoreChanges, HistoryMax: req.HistoryMax, RunID: req.RunID, Health: req.Health})
	if err != nil {
		return rel, fmt.Errorf("upgrade of %s failed, and the atomic rollback to revision %d also failed: %v; original error: %w", rel.Name, deployed.Version, err, cause)
	}
	return rb, fmt.Errorf("upgrade of %s failed and was rolled back to revision %d as revision %d (atomic): %w", rel.Name, deployed.Version, rb.Version, cause)
}

// PendingError is a release held by an operation that is running or crashed.
type PendingError struct {
	Name, Namespace string
	Status          Status
	Revision        int
	Since           time.Time
	// RunID is the run that wrote the pending record (RunLabel; "" for
	// helm's).
	RunID string
	// Running, when known, names the run under way that holds the
	// release (its stack's lock holder): "convoy apply (run …) …".
	Running string
	// Held is that holder as the stack's lock records it (a
	// *stacklock.HeldError; nil: not known to hold it).
	Held error
}

func (e *PendingError) Error() string {
	age := "an unknown time"
	if !e.Since.IsZero() {
		age = time.Since(e.Since).Round(time.Second).String()
	}
	if e.Running != "" {
		return fmt.Sprintf("release %s (namespace %s) is %s at revision %d since %s ago: %s and is deploying it; try again once it is done",
			e.Name, e.Namespace, e.Status, e.Revision, age, e.Running)
	}
	return fmt.Sprintf("release %s (namespace %s) is %s at revision %d since %s ago: another operation is running or one crashed; if none is running, resolve it with `convoy recover %s`",
		e.Name, e.Namespace, e.Status, e.Revision, age, e.Name)
}

func pendingError(r *Release) error {
	return &PendingError{Name: r.Name, Namespace: r.Namespace, Status: r.Info.Status, Revision: r.Version, Since: r.Info.LastDeployed, RunID: r.Labels[RunLabel]}
}

// whyStopped says why an operation stopped when a context ended it: the
// user interrupted it, or a wait ran out of its timeout.
func whyStopped(ctx context.Context, err error, timeout time.Duration) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return fmt.Errorf("stopped: %w", cause) // the run's lock was lost
		}
		return fmt.Errorf("interrupted: %w", err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("timed out after %s: %w", timeout, err)
	}
	return err
}

// blockedMessage is a wait's blockers on one line: the first object and
// how many more.
func blockedMessage(objs []kube.ObjectStatus) string {
	if len(objs) == 0 {
		return "waiting"
	}
	msg := "waiting for " + objs[0].String()
	if len(objs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(objs)-1)
	}
	return msg
}

// forgetRecords keeps of the records p read (History, Last, Deployed)
// what their metadata says (partial records), and their times.
func (p *Prepared) forgetRecords() {
	history := make([]*Release, len(p.History))
	for i, r := range p.History {
		h := &Release{Name: r.Name, Namespace: r.Namespace, Version: r.Version, Labels: r.Labels, Annotations: r.Annotations,
			createdAt: r.createdAt, resourceVersion: r.resourceVersion, rewritten: r.rewritten, partial: true}
		if r.Info != nil {
			h.Info = &Info{Status: r.Info.Status, Description: r.Info.Description, FirstDeployed: r.Info.FirstDeployed, LastDeployed: r.Info.LastDeployed}
		}
		history[i] = h
		if r == p.Last {
			p.Last = h
		}
		if r == p.Deployed {
			p.Deployed = h
		}
	}
	p.History = history
}

// Prunes are the revisions p's deploy deletes once its revision is
// recorded deployed, oldest first (Storage.Prune keeps the newest
// deployed one: this revision, then): what a plan shows. Revisions others
// write since are pruned by the next deploy.
func (p *Prepared) Prunes() []int {
	max := p.Request.HistoryMax
	if max <= 0 || len(p.History)+1 <= max {
		return nil
	}
	versions := make([]int, len(p.History))
	for i, r := range p.History {
		versions[i] = r.Version
	}
	slices.Sort(versions)
	return versions[:len(versions)+1-max]
}
