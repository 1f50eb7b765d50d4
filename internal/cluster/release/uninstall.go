package release

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/convoy-sh/convoy/internal/sensitive"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// UninstallRequest removes a release.
type UninstallRequest struct {
	Name, Namespace string
	// KeepHistory leaves the records, the newest marked uninstalled.
	KeepHistory  bool
	DisableHooks bool
	// Wait waits until the deleted objects are gone.
	Wait bool
	// Timeout bounds each wait (hooks, deletion); 0 means DefaultTimeout.
	Timeout time.Duration
	// RunID labels the record while it is uninstalling (RunLabel).
	RunID string `json:",omitempty"`
	// Redact masks sensitive values in the description of a failure.
	Redact *sensitive.Redactor `json:"-"`
}

func (r UninstallRequest) timeout() time.Duration { return cmp.Or(r.Timeout, DefaultTimeout) }

// UninstallResult says what an uninstall left behind on purpose.
type UninstallResult struct {
	Release *Release
	// Kept are objects annotated helm.sh/resource-policy: keep.
	Kept []kube.Ref
}

// Uninstall runs the pre-delete hooks, deletes the release's objects in
// reverse install order, runs the post-delete hooks, and removes the
// records (or marks the newest uninstalled with KeepHistory).
func (e *Engine) Uninstall(ctx context.Context, req UninstallRequest) (*UninstallResult, error) {
	store := e.Storage(req.Namespace)
	history, err := settledHistory(ctx, store, req.Name, req.Namespace)
	if err != nil {
		return nil, err
	}
	last := history[len(history)-1]
	if last.Info.Status == StatusUninstalled {
		if req.KeepHistory {
			return &UninstallResult{Release: last}, nil
		}
		return &UninstallResult{Release: last}, purge(ctx, store, history)
	}

	objs, _, err := e.parseStoredAs(last.Manifest, req.Name, req.Namespace, last.Version, true)
	if err != nil {
		return nil, fmt.Errorf("revision %d of %s: %w", last.Version, req.Name, err)
	}
	last.Info.Status = StatusUninstalling
	last.Info.Deleted = time.Now()
	last.Info.Description = "Deletion in progress (or silently failed)"
	last.Labels = withRun(last.Labels, req.RunID)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := e.updateRecord(ctx, store, last); err != nil {
		return nil, err
	}
	e.logf(req.Namespace, req.Name, PhaseApplying, "uninstalling revision %d", last.Version)

	kept, runErr := e.performUninstall(ctx, last, objs, req)
	runErr = whyStopped(ctx, runErr, req.timeout())
	res := &UninstallResult{Release: last, Kept: kept}
	if runErr != nil {
		if err := e.writeFinal(ctx, store, last, StatusFailed, req.Redact.Text(fmt.Sprintf("Uninstallation failed: %v", runErr))); err != nil {
			return res, fmt.Errorf("%w; %w", runErr, err)
		}
		return res, runErr
	}
	if !req.KeepHistory {
		return res, Retry(ctx, e.grace, func(ctx context.Context) error { return purge(ctx, store, history) })
	}
	return res, e.writeFinal(ctx, store, last, StatusUninstalled, "Uninstallation complete")
}

func (e *Engine) performUninstall(ctx context.Context, rel *Release, objs []*unstructured.Unstructured, req UninstallRequest) ([]kube.Ref, error) {
	timeout := req.timeout()
	if !req.DisableHooks {
		if err := e.runHooks(ctx, rel, chart.HookPreDelete, timeout); err != nil {
			return nil, err
		}
	}
	del, kept := deletable(objs)
	if err := checkFence(ctx); err != nil {
		return kept, err
	}
	deleted, err := e.kube.Delete(ctx, del, kube.DeleteOptions{Propagation: kube.PropagationBackground})
	if err != nil {
		return kept, err
	}
	if req.Wait && len(deleted) > 0 {
		wctx, cancel := context.WithTimeout(ctx, timeout)
		err := e.kube.WaitForDelete(wctx, deleted)
		cancel()
		if err != nil {
			return kept, err
		}
	}
	if !req.DisableHooks {
		if err := e.runHooks(ctx, rel, chart.HookPostDelete, timeout); err != nil {
			return kept, err
		}
	}
	return kept, nil
}

func purge(ctx context.Context, store *Storage, history []*Release) error {
	for _, r := range history {
		if err := store.Delete(ctx, r.Name, r.Version); err != nil && !errors.Is(err, ErrReleaseNotFound) {
			return err
		}
	}
	return nil
}

// Recover resolves a release left pending by a crashed operation: the
// pending revision is marked failed, saying what was interrupted and when,
// so the next deploy can proceed. It refuses a release that is not pending.
func (e *Engine) Recover(ctx context.Context, name, namespace string) (*Release, error) {
	store := e.Storage(namespace)
	last, err := store.Last(ctx, name)
	if err != nil {
		return nil, err
	}
	if !last.Info.Status.IsPending() {
		return nil, fmt.Errorf("release %s revision %d is %s, not pending: nothing to recover", name, last.Version, last.Info.Status)
	}
	description := fmt.Sprintf("Recovered by convoy: %s of revision %d was interrupted (started %s)", last.Info.Status, last.Version, last.Info.LastDeployed.Format(time.RFC3339))
	if err := e.writeFinal(ctx, store, last, StatusFailed, description); err != nil {
		return nil, err
	}
	return last, nil
}
