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
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// RollbackRequest rolls a release back to an earlier revision.
type RollbackRequest struct {
	Name, Namespace string
	// Revision to restore; 0 means the one before the newest.
	Revision int
	Wait     WaitMode
	// Timeout bounds each wait (hooks, resources); 0 means DefaultTimeout.
	Timeout       time.Duration
	DisableHooks  bool
	CleanupOnFail bool
	HistoryMax    int
	// IgnoreChanges are fields left to other field managers, as in
	// Request.
	IgnoreChanges kube.IgnoreRules
	// RunID labels the new revision's record (RunLabel).
	RunID string
	// Description is the new revision's description; "": "Rollback to N".
	Description string
	// Redact masks sensitive values in the description of a failure.
	Redact *sensitive.Redactor
	// Health judges the release's custom resources while it waits, as
	// in Request.
	Health kube.Health
}

func (r RollbackRequest) timeout() time.Duration { return cmp.Or(r.Timeout, DefaultTimeout) }

// Rollback restores an earlier revision's chart, values and manifest as a
// new revision (like `helm rollback`): rollback hooks run, the restored
// objects are applied, and the objects the target lacks are deleted: those
// of the deployed revision, and those of a newer failed revision that the
// release still owns (what a failed upgrade created).
func (e *Engine) Rollback(ctx context.Context, req RollbackRequest) (*Release, error) {
	store := e.Storage(req.Namespace)
	history, err := settledHistory(ctx, store, req.Name, req.Namespace)
	if err != nil {
		return nil, err
	}
	last := history[len(history)-1]
	want := cmp.Or(req.Revision, last.Version-1)
	i := slices.IndexFunc(history, func(r *Release) bool { return r.Version == want })
	if i < 0 {
		return nil, fmt.Errorf("release %s has no revision %d to roll back to: %w", req.Name, want, ErrReleaseNotFound)
	}
	target := history[i]
	var current *Release
	for _, r := range history {
		if r.Info.Status == StatusDeployed {
			current = r
		}
	}

	objs, mapped, err := e.parseStored(target.Manifest, req.Name, req.Namespace, target.Version)
	if err != nil {
		return nil, fmt.Errorf("revision %d of %s: %w", target.Version, req.Name, err)
	}
	// The new revision records what it applies: the target's removed API
	// versions as the successors its objects were applied as, so that
	// helm can upgrade from it.
	manifest := target.Manifest
	if len(mapped) > 0 {
		manifest, _ = e.APIs().Migrate(manifest, e.servedAPIs())
	}
	var previous = objs[:0:0]
	if base := cmp.Or(current, last); base.Info.Status != StatusUninstalled {
		if previous, err = e.parseRecordManifest(base.Manifest, req.Name, req.Namespace); err != nil {
			return nil, fmt.Errorf("revision %d of %s: %w", base.Version, req.Name, err)
		}
	}
	// As Helm's rollback, which deletes what the newest revision has and
	// the target lacks: the objects a failed upgrade created (an atomic
	// upgrade's rollback runs right after it failed) go too, those it
	// still owns.
	var leftovers []kube.Ref
	if current != nil && last != current && last.Info.Status != StatusUninstalled {
		failed, err := e.parseRecordManifest(last.Manifest, req.Name, req.Namespace)
		if err != nil {
			return nil, fmt.Errorf("revision %d of %s: %w", last.Version, req.Name, err)
		}
		leftovers = removed(failed, append(slices.Clip(objs), previous...))
	}
	setOwnership(objs, req.Name, req.Namespace)

	now := time.Now()
	rel := &Release{
		Name:      req.Name,
		Namespace: req.Namespace,
		Chart:     target.Chart,
		Config:    target.Config,
		Manifest:  manifest,
		Hooks:     cloneHooks(target.Hooks),
		Version:   last.Version + 1,
		Info: &Info{
			FirstDeployed:    history[0].Info.FirstDeployed,
			LastDeployed:     now,
			Status:           StatusPendingRollback,
			Description:      cmp.Or(req.Description, fmt.Sprintf("Rollback to %d", target.Version)),
			Notes:            target.Info.Notes,
			RollbackRevision: target.Version,
		},
		ApplyMethod: ApplyMethodSSA,
		Labels:      withRun(last.Labels, req.RunID),
	}
	if err := e.createRecord(ctx, store, rel); err != nil {
		return nil, err
	}
	e.logf(req.Namespace, req.Name, PhaseApplying, "rolling back to revision %d as revision %d", target.Version, rel.Version)

	created, runErr := e.performRollback(ctx, rel, objs, previous, leftovers, req)
	runErr = whyStopped(ctx, runErr, req.timeout())
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if current != nil {
		if err := e.writeFinal(ctx, store, current, StatusSuperseded, current.Info.Description); err != nil {
			want := StatusDeployed
			if runErr != nil {
				want = StatusFailed
			}
			err = &RecordError{Name: rel.Name, Namespace: rel.Namespace, Revision: rel.Version, Left: rel.Info.Status, Want: want,
				RunID: rel.Labels[RunLabel], Err: fmt.Errorf("superseding revision %d: %w", current.Version, errors.Unwrap(err))}
			return rel, errors.Join(runErr, err)
		}
	}
	if runErr != nil {
		if err := e.writeFinal(ctx, store, rel, StatusFailed, req.Redact.Text(fmt.Sprintf("Rollback %q failed: %v", req.Name, runErr))); err != nil {
			return rel, fmt.Errorf("%w; %w", runErr, err)
		}
		if req.CleanupOnFail && len(created) > 0 {
			if err := checkFence(rctx); err != nil {
				return rel, fmt.Errorf("%w; cleanup on fail not done: %w", runErr, err)
			}
			if _, err := e.kube.Delete(rctx, created, kube.DeleteOptions{Propagation: kube.PropagationBackground}); err != nil {
				return rel, fmt.Errorf("%w; cleanup on fail also failed: %v", runErr, err)
			}
		}
		return rel, runErr
	}
	if err := e.writeFinal(ctx, store, rel, StatusDeployed, rel.Info.Description); err != nil {
		return rel, err
	}
	e.logf(req.Namespace, req.Name, PhaseDone, "revision %d deployed (rollback to %d)", rel.Version, target.Version)
	return rel, Retry(ctx, e.grace, func(ctx context.Context) error { return store.Prune(ctx, req.Name, req.HistoryMax) })
}

func (e *Engine) performRollback(ctx context.Context, rel *Release, objs, previous []*unstructured.Unstructured, leftovers []kube.Ref, req RollbackRequest) ([]kube.Ref, error) {
	return e.rollout(ctx, rel, rollout{
		pre: chart.HookPreRollback, post: chart.HookPostRollback, objs: objs, previous: previous, leftovers: leftovers,
		ignore: req.IgnoreChanges, wait: req.Wait, timeout: req.timeout(), disableHooks: req.DisableHooks, health: req.Health,
	})
}

func cloneHooks(hs []*Hook) []*Hook {
	out := make([]*Hook, len(hs))
	for i, h := range hs {
		c := *h
		c.LastRun = HookExecution{}
		out[i] = &c
	}
	return out
}
