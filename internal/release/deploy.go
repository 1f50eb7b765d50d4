package release

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/kube"
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

// DefaultTimeout is Helm's --timeout default.
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
	// ForceConflicts takes over fields owned by other field managers.
	ForceConflicts bool
	// Labels are extra labels on the release records (e.g. convoy.dev/stack).
	Labels map[string]string
}

func (r *Request) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

// Render renders the request as the next revision would: what Deploy
// applies, without touching the cluster (plan and `convoy render` use it).
func (e *Engine) Render(ctx context.Context, req *Request) (*chart.Rendered, int, error) {
	last, err := e.Storage(req.Namespace).Last(ctx, req.Name)
	if err != nil && !errors.Is(err, ErrReleaseNotFound) {
		return nil, 0, err
	}
	action, revision := chart.ActionInstall, 1
	if last != nil {
		revision = last.Version + 1
		if last.Info.Status != StatusUninstalled {
			action = chart.ActionUpgrade
		}
	}
	out, err := chart.Render(req.Chart, chart.RenderOptions{
		ReleaseName:  req.Name,
		Namespace:    req.Namespace,
		Revision:     revision,
		Action:       action,
		Capabilities: e.caps,
		UserValues:   req.Values,
	})
	return out, revision, err
}

// Deploy installs the release, or upgrades it when a revision exists:
// render → validate → record pending → pre-hooks → apply → wait →
// post-hooks → record deployed (previous deployed → superseded). It returns
// the final record, which says what happened also when err is not nil.
func (e *Engine) Deploy(ctx context.Context, req *Request) (*Release, error) {
	store := e.Storage(req.Namespace)
	history, err := store.History(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	var last, deployed *Release
	for _, r := range history {
		last = r
		if r.Info.Status == StatusDeployed {
			deployed = r
		}
	}
	if last != nil && last.Info.Status.IsPending() {
		return nil, pendingError(last)
	}
	// An uninstalled release kept with its history is installed anew.
	isInstall := last == nil || (last.Info.Status == StatusUninstalled && deployed == nil)
	revision := 1
	if last != nil {
		revision = last.Version + 1
	}
	action := chart.ActionUpgrade
	if isInstall {
		action = chart.ActionInstall
	}

	e.logf(req.Name, "rendering revision %d", revision)
	rendered, err := chart.Render(req.Chart, chart.RenderOptions{
		ReleaseName:  req.Name,
		Namespace:    req.Namespace,
		Revision:     revision,
		Action:       action,
		Capabilities: e.caps,
		UserValues:   req.Values,
	})
	if err != nil {
		return nil, err
	}
	// As Helm: crds/ are installed (never upgraded) before anything else,
	// so the release's objects of those kinds can be built.
	if isInstall && len(rendered.CRDs) > 0 {
		if err := e.installCRDs(ctx, req.Name, rendered.CRDs); err != nil {
			return nil, err
		}
	}
	objs, src, err := e.buildManifests(rendered.Manifests, req.Namespace)
	if err != nil {
		return nil, err
	}
	// The objects the release owned before: the deployed revision's, or,
	// after a failed upgrade, the last revision's.
	var previous []*unstructured.Unstructured
	if base := cmpOr(deployed, last); base != nil && base.Info.Status != StatusUninstalled {
		if previous, err = e.parseRecordManifest(base.Manifest, req.Namespace); err != nil {
			return nil, fmt.Errorf("previous revision %d of %s: %w", base.Version, req.Name, err)
		}
	}
	setOwnership(objs, req.Name, req.Namespace)

	if req.CreateNamespace {
		if err := e.kube.EnsureNamespace(ctx, req.Namespace, nil); err != nil {
			return nil, err
		}
	}
	// Validate against the server before recording anything: an invalid
	// object must leave neither a revision nor a change behind.
	// Objects the release did not own before may be adopted only with
	// take_ownership.
	adopt := map[identity]bool{}
	if req.TakeOwnership {
		owned := identities(previous)
		for id := range identities(objs) {
			adopt[id] = !owned[id]
		}
	} else if err := e.checkOwnership(ctx, objs, req.Name, req.Namespace, identities(previous)); err != nil {
		return nil, err
	}
	if _, err := e.apply(ctx, req.Name, objs, src, adopt, kube.ApplyOptions{DryRun: kube.DryRunServer, Force: req.ForceConflicts}); err != nil {
		return nil, err
	}

	now := time.Now()
	rel := &Release{
		Name:      req.Name,
		Namespace: req.Namespace,
		Chart:     rendered.Chart,
		Config:    req.Values,
		Manifest:  rendered.Manifest(false),
		Hooks:     hooksFromChart(rendered.Hooks),
		Version:   revision,
		Info: &Info{
			FirstDeployed: now,
			LastDeployed:  now,
			Status:        StatusPendingInstall,
			Description:   "Initial install underway",
			Notes:         rendered.Notes,
		},
		ApplyMethod: ApplyMethodSSA,
		Labels:      maps.Clone(req.Labels),
	}
	if !isInstall {
		rel.Info.Status, rel.Info.Description = StatusPendingUpgrade, "Preparing upgrade"
		if first := history[0]; !first.Info.FirstDeployed.IsZero() {
			rel.Info.FirstDeployed = first.Info.FirstDeployed
		}
	}
	if err := store.Create(ctx, rel); err != nil {
		if errors.Is(err, ErrReleaseExists) {
			return nil, fmt.Errorf("release %s revision %d was just created by another operation: %w", req.Name, revision, err)
		}
		return nil, err
	}

	created, runErr := e.perform(ctx, rel, objs, src, adopt, previous, isInstall, req)
	if runErr == nil {
		return rel, e.finishDeployed(ctx, store, rel, deployed, req, isInstall)
	}
	return e.failDeploy(ctx, store, rel, deployed, created, req, isInstall, runErr)
}

func cmpOr(a, b *Release) *Release {
	if a != nil {
		return a
	}
	return b
}

func (e *Engine) installCRDs(ctx context.Context, name string, files []*chart.File) error {
	var crds []*unstructured.Unstructured
	for _, f := range files {
		got, err := e.kube.Parse(string(f.Data), "")
		if err != nil {
			return fmt.Errorf("CRD file %s: %w", f.Name, err)
		}
		crds = append(crds, got...)
	}
	e.logf(name, "installing %d CRDs", len(crds))
	return e.kube.InstallCRDs(ctx, crds)
}

// perform runs the cluster-side steps of a deploy. It returns the objects
// this deploy created (for cleanup_on_fail).
func (e *Engine) perform(ctx context.Context, rel *Release, objs []*unstructured.Unstructured, src sources, adopt map[identity]bool, previous []*unstructured.Unstructured, isInstall bool, req *Request) ([]kube.Ref, error) {
	pre, post := chart.HookPreUpgrade, chart.HookPostUpgrade
	if isInstall {
		pre, post = chart.HookPreInstall, chart.HookPostInstall
	}
	if !req.DisableHooks {
		if err := e.runHooks(ctx, rel, pre, req.timeout()); err != nil {
			return nil, fmt.Errorf("failed %s: %w", pre, err)
		}
	}
	e.logf(rel.Name, "applying %d objects", len(objs))
	results, err := e.apply(ctx, rel.Name, objs, src, adopt, kube.ApplyOptions{Force: req.ForceConflicts})
	var created []kube.Ref
	for _, r := range results {
		if r.Action == kube.ActionCreated {
			created = append(created, r.Ref)
		}
	}
	if err != nil {
		return created, err
	}
	if gone := removed(previous, objs); len(gone) > 0 {
		e.logf(rel.Name, "deleting %d objects no longer in the release", len(gone))
		if _, err := e.kube.Delete(ctx, gone, kube.DeleteOptions{Propagation: kube.PropagationBackground}); err != nil {
			return created, err
		}
	}
	if req.Wait != WaitNone {
		e.logf(rel.Name, "waiting for %d objects to be ready", len(objs))
		wctx, cancel := context.WithTimeout(ctx, req.timeout())
		err := e.kube.Wait(wctx, refs(objs), kube.WaitOptions{WaitForJobs: req.Wait == WaitReadyAndJobs})
		cancel()
		if err != nil {
			return created, err
		}
	}
	if !req.DisableHooks {
		if err := e.runHooks(ctx, rel, post, req.timeout()); err != nil {
			return created, fmt.Errorf("failed %s: %w", post, err)
		}
	}
	return created, nil
}

// finishDeployed records success: the new revision deployed, the previous
// deployed one superseded, old revisions pruned.
func (e *Engine) finishDeployed(ctx context.Context, store *Storage, rel, previous *Release, req *Request, isInstall bool) error {
	if previous != nil {
		previous.Info.Status = StatusSuperseded
		if err := store.Update(ctx, previous); err != nil {
			return err
		}
	}
	rel.Info.Status = StatusDeployed
	rel.Info.Description = "Upgrade complete"
	if isInstall {
		rel.Info.Description = "Install complete"
	}
	if err := store.Update(ctx, rel); err != nil {
		return err
	}
	e.logf(rel.Name, "revision %d deployed", rel.Version)
	return store.Prune(ctx, rel.Name, req.HistoryMax)
}

// failDeploy records a failed deploy and then, in this order, cleans up
// (cleanup_on_fail) and rolls back or uninstalls (atomic).
func (e *Engine) failDeploy(ctx context.Context, store *Storage, rel, deployed *Release, created []kube.Ref, req *Request, isInstall bool, cause error) (*Release, error) {
	// Recording must happen even when ctx was cancelled (Ctrl-C): the
	// record has to say what happened.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	rel.Info.Status = StatusFailed
	if isInstall {
		rel.Info.Description = fmt.Sprintf("Release %q failed: %v", rel.Name, cause)
	} else {
		rel.Info.Description = fmt.Sprintf("Upgrade %q failed: %v", rel.Name, cause)
	}
	if err := store.Update(rctx, rel); err != nil {
		return rel, fmt.Errorf("%w (and recording the failure failed: %v)", cause, err)
	}
	e.logf(rel.Name, "revision %d failed: %v", rel.Version, cause)

	if !isInstall && req.CleanupOnFail && len(created) > 0 {
		e.logf(rel.Name, "cleanup on fail: deleting %d objects this upgrade created", len(created))
		if _, err := e.kube.Delete(rctx, created, kube.DeleteOptions{Propagation: kube.PropagationBackground}); err != nil {
			return rel, fmt.Errorf("%w; cleanup on fail also failed: %v", cause, err)
		}
	}
	if !req.Atomic {
		return rel, cause
	}
	if isInstall {
		e.logf(rel.Name, "atomic: uninstalling the failed install")
		if _, err := e.Uninstall(rctx, UninstallRequest{Name: rel.Name, Namespace: rel.Namespace, Timeout: req.timeout(), Wait: true}); err != nil {
			return rel, fmt.Errorf("release %s failed, and the atomic uninstall also failed: %v; original error: %w", rel.Name, err, cause)
		}
		return rel, fmt.Errorf("release %s failed and was uninstalled (atomic): %w", rel.Name, cause)
	}
	if deployed == nil {
		return rel, fmt.Errorf("upgrade of %s failed and there is no deployed revision to roll back to (atomic): %w", rel.Name, cause)
	}
	e.logf(rel.Name, "atomic: rolling back to revision %d", deployed.Version)
	rb, err := e.Rollback(rctx, RollbackRequest{Name: rel.Name, Namespace: rel.Namespace, Revision: deployed.Version, Wait: req.Wait, Timeout: req.timeout(), DisableHooks: req.DisableHooks, ForceConflicts: req.ForceConflicts, HistoryMax: req.HistoryMax})
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
}

func (e *PendingError) Error() string {
	age := "an unknown time"
	if !e.Since.IsZero() {
		age = time.Since(e.Since).Round(time.Second).String()
	}
	return fmt.Sprintf("release %s (namespace %s) is %s at revision %d since %s ago: another operation is running or one crashed; if none is running, resolve it with `convoy recover %s`",
		e.Name, e.Namespace, e.Status, e.Revision, age, e.Name)
}

func pendingError(r *Release) error {
	return &PendingError{Name: r.Name, Namespace: r.Namespace, Status: r.Info.Status, Revision: r.Version, Since: r.Info.LastDeployed}
}
