package apply_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/run/apply"
	"github.com/convoy-sh/convoy/internal/run/apply/applytest"
	"github.com/convoy-sh/convoy/internal/stack/dag"
)

const ns = "shop"

// deploy is a deploy step of release id in namespace shop, prepared from
// the fake's records.
func deploy(f *applytest.Engine, id string, deps ...string) *apply.Step {
	return &apply.Step{
		ID: id, Name: id, Namespace: ns, DependsOn: deps, Kind: apply.StepDeploy, Engine: f,
		Prepare: f.Prepare(release.Request{Name: id, Namespace: ns}), RunID: "run-1",
	}
}

// shop: db ← api ← web, db ← worker, docs independent; db is deployed at
// revision 1 (its step upgrades it), the others are installed.
func shop(f *applytest.Engine) []*apply.Step {
	f.Seed(ns, "db", release.StatusDeployed)
	return []*apply.Step{
		deploy(f, "db"),
		deploy(f, "docs"),
		deploy(f, "api", "db"),
		deploy(f, "worker", "db"),
		deploy(f, "web", "api"),
	}
}

// progressEvent is one call of apply.Progress.
type progressEvent struct {
	kind    string // started, finished, skipped
	id      string
	outcome apply.Outcome
	reason  string
}

// recorder is an apply.Progress that records what the walk reports.
type recorder struct {
	mu     sync.Mutex
	events []progressEvent
	// started receives the ID of each step started (buffered: 64).
	started chan string
}

func (r *recorder) add(e progressEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) Event(release.Event) {}
func (r *recorder) Started(id string) {
	r.add(progressEvent{kind: "started", id: id})
	r.started <- id
}
func (r *recorder) Close()               {}
func (r *recorder) Skipped(id, w string) { r.add(progressEvent{kind: "skipped", id: id, reason: w}) }
func (r *recorder) Finished(id string, o apply.Outcome) {
	r.add(progressEvent{kind: "finished", id: id, outcome: o})
}

// start runs Execute in the background with a recorder for progress; the
// returned func waits for it, checks the results and the progress reported
// against each other, and returns the results by step ID.
func start(t *testing.T, ctx context.Context, steps []*apply.Step, opts apply.ExecOptions) func() map[string]*apply.Result {
	t.Helper()
	_, wait := startRecorded(t, ctx, steps, opts)
	return wait
}

// startRecorded is start that also returns the recorder of progress.
func startRecorded(t *testing.T, ctx context.Context, steps []*apply.Step, opts apply.ExecOptions) (*recorder, func() map[string]*apply.Result) {
	t.Helper()
	rec := &recorder{started: make(chan string, 64)}
	opts.Progress = rec
	done := make(chan []*apply.Result, 1)
	go func() { done <- apply.Execute(ctx, steps, opts) }()
	return rec, func() map[string]*apply.Result {
		t.Helper()
		var results []*apply.Result
		select {
		case results = <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Execute did not return")
		}
		if len(results) != len(steps) {
			t.Fatalf("%d results for %d steps", len(results), len(steps))
		}
		byID := map[string]*apply.Result{}
		for i, r := range results {
			if r.ID != steps[i].ID || r.Step != steps[i] {
				t.Fatalf("result %d is %s, want step %s (results come in the steps' order)", i, r.ID, steps[i].ID)
			}
			byID[r.ID] = r
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		checkProgress(t, steps, byID, rec.events)
		return byID
	}
}

// execute runs Execute to the end (see start).
func execute(t *testing.T, ctx context.Context, steps []*apply.Step, opts apply.ExecOptions) map[string]*apply.Result {
	t.Helper()
	return start(t, ctx, steps, opts)()
}

// checkProgress checks what the walk reported against how the steps
// ended: a step that ran is Started then Finished with its outcome, and
// only after everything it depends on Finished successfully; a skipped one
// is only Skipped, after the dependency that stopped it ended; one that
// never started as the run was cancelled is only Finished, cancelled.
func checkProgress(t *testing.T, steps []*apply.Step, results map[string]*apply.Result, events []progressEvent) {
	t.Helper()
	at := map[string]map[string][]int{} // id → kind → indexes
	for i, e := range events {
		if at[e.id] == nil {
			at[e.id] = map[string][]int{}
		}
		at[e.id][e.kind] = append(at[e.id][e.kind], i)
	}
	// end is the index of the event that ended a step (-1: none).
	end := func(id string) int {
		if ix := slices.Concat(at[id]["finished"], at[id]["skipped"]); len(ix) == 1 {
			return ix[0]
		}
		return -1
	}
	for _, s := range steps {
		r, ev := results[s.ID], at[s.ID]
		switch r.Status {
		case dag.Skipped:
			if len(ev["skipped"]) != 1 || len(ev["started"]) != 0 || len(ev["finished"]) != 0 {
				t.Errorf("%s skipped: reported %v", s.ID, ev)
				continue
			}
			e := events[ev["skipped"][0]]
			found := false
			for _, d := range s.DependsOn {
				if dr := results[d]; dr != nil && e.reason == fmt.Sprintf("dependency %s %s", d, dr.Status) && end(d) >= 0 && end(d) < ev["skipped"][0] {
					found = true
				}
			}
			if !found || e.reason != r.Reason {
				t.Errorf("%s skipped (%q) with reason %q, before its dependency ended or for none of %v", s.ID, r.Reason, e.reason, s.DependsOn)
			}
		case dag.Succeeded, dag.Failed:
			if len(ev["started"]) != 1 || len(ev["finished"]) != 1 || len(ev["skipped"]) != 0 || ev["started"][0] > ev["finished"][0] {
				t.Errorf("%s %s: reported %v", s.ID, r.Status, ev)
				continue
			}
			o := events[ev["finished"][0]].outcome
			if o.Status != r.Status || fmt.Sprint(o.Err) != fmt.Sprint(r.Err) {
				t.Errorf("%s finished %s (%v), its result is %s (%v)", s.ID, o.Status, o.Err, r.Status, r.Err)
			}
			for _, d := range s.DependsOn {
				if results[d] == nil {
					continue // not in the run
				}
				if results[d].Status != dag.Succeeded || end(d) < 0 || end(d) > ev["started"][0] {
					t.Errorf("%s started before its dependency %s succeeded (%s)", s.ID, d, results[d].Status)
				}
			}
		case dag.Cancelled:
			// Never started: it ends without having started.
			if len(ev["finished"]) != 1 || len(ev["started"]) != 0 || len(ev["skipped"]) != 0 {
				t.Errorf("%s cancelled: reported %v", s.ID, ev)
				continue
			}
			// By the run's end, or by giving up on its cluster.
			o := events[ev["finished"][0]].outcome
			if o.Status != dag.Cancelled || fmt.Sprint(o.Err) != fmt.Sprint(r.Err) || !(errors.Is(o.Err, context.Canceled) || errors.As(o.Err, new(*apply.NotStartedError))) {
				t.Errorf("%s cancelled: finished %s (%v)", s.ID, o.Status, o.Err)
			}
		default:
			t.Errorf("%s: status %q", s.ID, r.Status)
		}
	}
}

// next waits for the fake to start an execute or an uninstall.
func next(t *testing.T, f *applytest.Engine) string {
	t.Helper()
	select {
	case k := <-f.Entered():
		return k
	case <-time.After(10 * time.Second):
		t.Fatal("no step started")
		return ""
	}
}
