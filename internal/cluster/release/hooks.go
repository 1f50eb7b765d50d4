package release

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// HookError is a hook that failed; the release fails with it.
type HookError struct {
	Event chart.HookEvent
	Hook  string // the hook's path (template file)
	Ref   kube.Ref
	Err   error
}

func (e *HookError) Error() string {
	if e.Ref.Name == "" || namesOnly(e.Err, e.Ref) {
		// The cause names the object (or there is none): say it once.
		return fmt.Sprintf("%s hook %s: %v", e.Event, e.Hook, e.Err)
	}
	return fmt.Sprintf("%s hook %s (%s) failed: %v", e.Event, e.Hook, e.Ref, e.Err)
}

// namesOnly reports whether err's message starts with ref, the one object
// it is about: a kube.ObjectError, or a wait's NotReadyError of ref alone.
func namesOnly(err error, ref kube.Ref) bool {
	var oe *kube.ObjectError
	var nr *kube.NotReadyError
	switch {
	case errors.As(err, &oe):
		return oe.Ref == ref && err == error(oe)
	case errors.As(err, &nr):
		return len(nr.Objects) == 1 && nr.Objects[0].Ref == ref && err == error(nr)
	}
	return false
}

func (e *HookError) Unwrap() error { return e.Err }

// hookOrder is Helm's: weight, then name.
func hookOrder(a, b *Hook) int {
	if c := cmp.Compare(a.Weight, b.Weight); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

func hasPolicy(h *Hook, p chart.HookDeletePolicy) bool {
	if len(h.DeletePolicies) == 0 {
		return p == chart.HookBeforeHookCreation // Helm's default
	}
	return slices.Contains(h.DeletePolicies, p)
}

// runHooks executes the release's hooks for event in weight/name order: each
// is (re)created and, for Jobs and Pods, waited to completion within
// timeout. The hooks' LastRun fields are updated in rel. On failure, the
// failed hook is deleted if it asks for hook-failed, and earlier hooks of
// the event that ask for hook-succeeded are deleted, as Helm does.
func (e *Engine) runHooks(ctx context.Context, rel *Release, event chart.HookEvent, timeout time.Duration) error {
	defer e.timings.since(hooksTime, time.Now())
	if err := checkFence(ctx); err != nil {
		return err
	}
	return e.runHookList(ctx, rel, event, hooksOf(rel, event), timeout, nil)
}

// hooksOf are the release's hooks for event, in the order they run.
func hooksOf(rel *Release, event chart.HookEvent) []*Hook {
	var hooks []*Hook
	for _, h := range rel.Hooks {
		if slices.Contains(h.Events, event) {
			hooks = append(hooks, h)
		}
	}
	slices.SortStableFunc(hooks, hookOrder)
	return hooks
}

// ranHook is told that a hook finished (err: how it failed), before any of
// the hook's delete policies remove its objects: what it reads of them
// (pod logs) is still there.
type ranHook func(h *Hook, objs []*unstructured.Unstructured, err error)

// runHookList runs hooks (of rel, in order) as runHooks does, telling ran,
// if not nil, of each that finished.
func (e *Engine) runHookList(ctx context.Context, rel *Release, event chart.HookEvent, hooks []*Hook, timeout time.Duration, ran ranHook) error {
	for i, h := range hooks {
		objs, err := e.kube.Parse(h.Manifest, rel.Namespace)
		if err != nil {
			return &HookError{Event: event, Hook: h.Path, Err: err}
		}
		if hasPolicy(h, chart.HookBeforeHookCreation) {
			if err := e.deleteAndWait(ctx, refs(objs), timeout); err != nil {
				return &HookError{Event: event, Hook: h.Path, Err: err}
			}
		}
		e.logf(rel.Namespace, rel.Name, PhaseHooks, "running %s hook %s", event, h.Path)
		h.LastRun = HookExecution{StartedAt: time.Now(), Phase: HookPhaseRunning}
		err = e.execHook(ctx, objs, timeout, kube.WaitOptions{
			Blockers: func(objs []kube.ObjectStatus) {
				e.notify(Event{Time: time.Now(), Namespace: rel.Namespace, Release: rel.Name, Phase: PhaseHooks,
					Message: blockedMessage(objs), Blockers: objs})
			},
			Unreachable: e.outages(rel, PhaseHooks),
		})
		h.LastRun.CompletedAt = time.Now()
		if ran != nil {
			ran(h, objs, err)
		}
		if err != nil {
			h.LastRun.Phase = HookPhaseFailed
			if hasPolicy(h, chart.HookFailed) {
				_, _ = e.kube.Delete(ctx, refs(objs), kube.DeleteOptions{Propagation: kube.PropagationBackground})
			}
			e.deleteSucceededHooks(ctx, rel.Namespace, hooks[:i])
			ref := kube.Ref{}
			if len(objs) > 0 {
				ref = kube.RefOf(objs[0])
			}
			return &HookError{Event: event, Hook: h.Path, Ref: ref, Err: err}
		}
		h.LastRun.Phase = HookPhaseSucceeded
	}
	e.deleteSucceededHooks(ctx, rel.Namespace, hooks)
	return nil
}

// execHook creates a hook's objects and waits for Jobs and Pods to finish,
// reporting blockers and outages as report says.
func (e *Engine) execHook(ctx context.Context, objs []*unstructured.Unstructured, timeout time.Duration, report kube.WaitOptions) error {
	if _, err := e.kube.Apply(ctx, objs, kube.ApplyOptions{Force: true}); err != nil {
		return err
	}
	var wait []kube.Ref
	for _, o := range objs {
		if k := o.GetKind(); k == "Job" || k == "Pod" {
			wait = append(wait, kube.RefOf(o))
		}
	}
	if len(wait) == 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return e.kube.WaitForCompletionWith(wctx, wait, report)
}

// deleteSucceededHooks removes, newest first, the hooks asking for
// hook-succeeded. A failure to delete is not the release's failure.
func (e *Engine) deleteSucceededHooks(ctx context.Context, namespace string, hooks []*Hook) {
	for _, h := range slices.Backward(hooks) {
		if !hasPolicy(h, chart.HookSucceeded) {
			continue
		}
		objs, err := e.kube.Parse(h.Manifest, namespace)
		if err != nil {
			continue
		}
		_, _ = e.kube.Delete(ctx, refs(objs), kube.DeleteOptions{Propagation: kube.PropagationBackground})
	}
}

// deleteAndWait deletes objects and waits until they are gone.
func (e *Engine) deleteAndWait(ctx context.Context, rs []kube.Ref, timeout time.Duration) error {
	deleted, err := e.kube.Delete(ctx, rs, kube.DeleteOptions{Propagation: kube.PropagationBackground})
	if err != nil || len(deleted) == 0 {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return e.kube.WaitForDelete(wctx, deleted)
}
