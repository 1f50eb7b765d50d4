package release

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"
)

// RunLabel marks a release record with the run that wrote it (the id of
// the stack lock the run held). A pending record whose run no longer holds
// the lock was interrupted: the next run of its stack marks it failed.
const RunLabel = "convoy.dev/run"

// withRun returns labels with the run writing the record; without a run
// id, a label copied from an earlier record is dropped.
func withRun(labels map[string]string, runID string) map[string]string {
	l := maps.Clone(labels)
	if l == nil {
		l = map[string]string{}
	}
	delete(l, RunLabel)
	if runID != "" {
		l[RunLabel] = runID
	}
	return l
}

// RecordError says a release's record may not say what happened: writing
// it failed even after retries. Left is what it said before.
type RecordError struct {
	Name, Namespace string
	Revision        int
	// Left is the status the record had before the failed write; Want is
	// the one that could not be written.
	Left, Want Status
	// Unknown: creating the record got no answer; it may not exist.
	Unknown bool
	// RunID is the run that wrote the record (RunLabel).
	RunID string
	Err   error
}

func (e *RecordError) Error() string {
	fix := fmt.Sprintf("`convoy recover %s` marks it failed", e.Name)
	if e.RunID != "" {
		fix = fmt.Sprintf("the next `convoy apply` of its stack marks it failed (interrupted run %s), or `convoy recover %s` does now", e.RunID, e.Name)
	}
	if errors.Is(e.Err, ErrNotHeld) {
		return fmt.Sprintf("release %s (namespace %s) revision %d was not recorded as %s: %v", e.Name, e.Namespace, e.Revision, e.Want, e.Err)
	}
	if errors.Is(e.Err, ErrRecordChanged) {
		return fmt.Sprintf("release %s (namespace %s) revision %d was not recorded as %s: another operation wrote its record since this one read it, and what it wrote stands (%v)",
			e.Name, e.Namespace, e.Revision, e.Want, e.Err)
	}
	if e.Unknown {
		return fmt.Sprintf("release %s (namespace %s) revision %d may have been recorded as %s: creating its record got no answer (%v). If it was, %s",
			e.Name, e.Namespace, e.Revision, e.Want, e.Err, fix)
	}
	return fmt.Sprintf("release %s (namespace %s) revision %d could not be recorded as %s (%v): its record says %s, unless a write arrives late. If it still does, %s",
		e.Name, e.Namespace, e.Revision, e.Want, e.Err, e.Left, fix)
}

func (e *RecordError) Unwrap() error { return e.Err }

// createRecord writes a new pending record, retried with backoff. An
// attempt whose answer was lost may have created it: a later attempt that
// finds the revision compares it with r, so that a record this operation
// created is not mistaken for another operation's.
func (e *Engine) createRecord(ctx context.Context, store *Storage, r *Release) error {
	defer e.timings.since(recordsTime, time.Now())
	defer encodeOnce(r)()
	attempts := 0
	err := Retry(ctx, e.grace, func(ctx context.Context) error {
		attempts++
		err := store.Create(ctx, r)
		if !errors.Is(err, ErrReleaseExists) || attempts == 1 {
			return err
		}
		got, gerr := store.Get(ctx, r.Name, r.Version)
		if gerr != nil {
			if errors.Is(gerr, ErrReleaseNotFound) {
				return fmt.Errorf("revision %d existed, then not: %w", r.Version, gerr)
			}
			return gerr
		}
		if got.Labels[RunLabel] == r.Labels[RunLabel] && got.Info.Status == r.Info.Status && got.Info.LastDeployed.Equal(r.Info.LastDeployed) {
			return nil // ours: an earlier attempt created it
		}
		return err
	})
	if err != nil && Transient(err) {
		return &RecordError{Name: r.Name, Namespace: r.Namespace, Revision: r.Version, Want: r.Info.Status, Unknown: true, RunID: r.Labels[RunLabel], Err: err}
	}
	return err
}

// writeFinal records r's final status (and description), retried with
// backoff, going on for the engine's grace period after ctx ended. When
// it fails, r keeps the status it had, and the error is a *RecordError
// that says what the record was left as and what fixes it.
func (e *Engine) writeFinal(ctx context.Context, store *Storage, r *Release, status Status, description string) error {
	defer e.timings.since(recordsTime, time.Now())
	was, wasDescription := r.Info.Status, r.Info.Description
	r.Info.Status, r.Info.Description = status, description
	err := e.updateRecord(ctx, store, r)
	if err != nil {
		r.Info.Status, r.Info.Description = was, wasDescription
		return &RecordError{Name: r.Name, Namespace: r.Namespace, Revision: r.Version, Left: was, Want: status, RunID: r.Labels[RunLabel], Err: err}
	}
	return nil
}

// updateRecord rewrites r's record, on the condition that it is as r was
// read, retried with backoff for the engine's grace period. An attempt
// whose answer was lost may have written it: a later attempt refused as a
// conflict reads the record, and takes it as written when it says what r
// says (status, description, run), so that this operation's own write is
// not mistaken for another's. Any other conflict is final: the record
// another operation wrote stands.
func (e *Engine) updateRecord(ctx context.Context, store *Storage, r *Release) error {
	lost := false // an earlier attempt got no answer
	defer encodeOnce(r)()
	return Retry(ctx, e.grace, func(ctx context.Context) error {
		err := store.Update(ctx, r)
		if errors.Is(err, ErrRecordChanged) && lost {
			got, gerr := store.Get(ctx, r.Name, r.Version)
			if gerr == nil && got.Info.Status == r.Info.Status && got.Info.Description == r.Info.Description && got.Labels[RunLabel] == r.Labels[RunLabel] {
				r.resourceVersion = got.resourceVersion
				return nil // ours: an earlier attempt wrote it
			}
		}
		lost = lost || (err != nil && Transient(err))
		return err
	})
}

// RecoverInterrupted marks a release's pending revision failed when it
// was left by run (RunLabel), which no longer runs: the caller holds the
// stack lock under another run id. It refuses when the newest record is
// another revision, not pending, or another run's.
func (e *Engine) RecoverInterrupted(ctx context.Context, name, namespace string, revision int, run, by string) (*Release, error) {
	store := e.Storage(namespace)
	last, err := store.Last(ctx, name)
	if err != nil {
		return nil, err
	}
	if last.Version != revision || !last.Info.Status.IsPending() || last.Labels[RunLabel] != run {
		return nil, fmt.Errorf("release %s changed since it was seen left pending by run %s at revision %d: it is %s at revision %d", name, run, revision, last.Info.Status, last.Version)
	}
	description := fmt.Sprintf("Interrupted run %s: %s of revision %d (started %s) did not finish; marked failed by run %s",
		run, last.Info.Status, last.Version, last.Info.LastDeployed.Format(time.RFC3339), by)
	if err := e.writeFinal(ctx, store, last, StatusFailed, description); err != nil {
		return nil, err
	}
	e.logf(namespace, name, PhaseFailed, "%s", description)
	return last, nil
}
