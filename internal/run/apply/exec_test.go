package apply_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/run/apply"
	"github.com/convoy-sh/convoy/internal/run/apply/applytest"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"github.com/convoy-sh/convoy/internal/stack/dag"
)

func TestExecuteAppliesInDependencyOrder(t *testing.T) {
	f := applytest.New()
	steps := shop(f)
	// db and docs are independent: both start before either ends.
	releaseDB, releaseDocs := f.Hold(applytest.OpExecute, ns, "db"), f.Hold(applytest.OpExecute, ns, "docs")
	wait := start(t, context.Background(), steps, apply.ExecOptions{Parallelism: 5})
	got := []string{next(t, f), next(t, f)}
	slices.Sort(got)
	if !slices.Equal(got, []string{"shop/db", "shop/docs"}) {
		t.Fatalf("first steps %v, want db and docs", got)
	}
	releaseDocs()
	releaseDB()
	res := wait() // checks that each step started after its dependencies succeeded

	for _, s := range steps {
		if r := res[s.ID]; r.Status != dag.Succeeded || r.Err != nil {
			t.Errorf("%s: %s %v", s.ID, r.Status, r.Err)
		}
	}
	if db := res["db"]; db.Release.Version != 2 || db.PreviousDeployed != 1 {
		t.Errorf("db upgraded to revision %d from %d, want 2 from 1", db.Release.Version, db.PreviousDeployed)
	}
	if api := res["api"]; api.Release.Version != 1 || api.PreviousDeployed != 0 {
		t.Errorf("api installed as revision %d over %d, want 1 over 0", api.Release.Version, api.PreviousDeployed)
	}
	if st := f.Statuses(ns, "db"); !slices.Equal(st, []release.Status{release.StatusSuperseded, release.StatusDeployed}) {
		t.Errorf("db records %v", st)
	}
	if f.Peak() < 2 {
		t.Errorf("peak %d: independent steps never ran at once", f.Peak())
	}
}

func TestIndependentStepsRunInParallelUpToTheBound(t *testing.T) {
	for _, par := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("parallelism %d", par), func(t *testing.T) {
			f := applytest.New()
			var steps []*apply.Step
			gates := map[string]func(){}
			for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
				steps = append(steps, deploy(f, id))
				gates[ns+"/"+id] = f.Hold(applytest.OpExecute, ns, id)
			}
			wait := start(t, context.Background(), steps, apply.ExecOptions{Parallelism: par})
			// Let the first par steps in, then release one step at a time,
			// each time waiting for the next to take its place: a walk
			// that started more than par would have them in flight at once.
			var running []string
			for range par {
				running = append(running, next(t, f))
			}
			// A walk that started more has them runnable now: let them
			// run (this cannot make a correct walk fail).
			for range 100 {
				runtime.Gosched()
			}
			for n := par; len(running) > 0; {
				gates[running[0]]()
				running = running[1:]
				if n < len(steps) {
					running = append(running, next(t, f))
					n++
				}
			}
			res := wait()
			for _, s := range steps {
				if res[s.ID].Status != dag.Succeeded {
					t.Errorf("%s: %s %v", s.ID, res[s.ID].Status, res[s.ID].Err)
				}
			}
			if f.Peak() != par {
				t.Fatalf("peak %d steps in flight, want exactly %d", f.Peak(), par)
			}
		})
	}
}

func TestPreparationsAreBoundedByRenders(t *testing.T) {
	for _, renders := range []int{1, 2} {
		t.Run(fmt.Sprintf("renders %d", renders), func(t *testing.T) {
			f := applytest.New()
			var (
				mu              sync.Mutex
				preparing, peak int
				entered         = make(chan string, 4)
				gates           = map[string]chan struct{}{}
				steps           []*apply.Step
			)
			for _, id := range []string{"a", "b", "c", "d"} {
				s := deploy(f, id)
				gate, prepare := make(chan struct{}), s.Prepare
				gates[id] = gate
				s.Prepare = func(ctx context.Context, applied map[string]*release.Release) (*release.Prepared, error) {
					mu.Lock()
					preparing++
					peak = max(peak, preparing)
					mu.Unlock()
					entered <- id
					<-gate
					mu.Lock()
					preparing--
					mu.Unlock()
					return prepare(ctx, applied)
				}
				steps = append(steps, s)
			}
			rec, wait := startRecorded(t, context.Background(), steps, apply.ExecOptions{Parallelism: 4, Renders: renders})
			// Every step starts at once (parallelism 4), and reaches its
			// preparation or the wait for a render slot.
			for range steps {
				<-rec.started
			}
			var in []string
			for range renders {
				in = append(in, <-entered)
			}
			for n := renders; len(in) > 0; {
				close(gates[in[0]])
				in = in[1:]
				if n < len(steps) {
					in = append(in, <-entered)
					n++
				}
			}
			res := wait()
			for _, s := range steps {
				if res[s.ID].Status != dag.Succeeded {
					t.Errorf("%s: %s %v", s.ID, res[s.ID].Status, res[s.ID].Err)
				}
			}
			if peak != renders {
				t.Fatalf("peak %d preparations at once, want exactly %d", peak, renders)
			}
		})
	}
}

func TestAFailedStepSkipsItsDependentsAndTheOthersFinish(t *testing.T) {
	broken := errors.New("Deployment shop/x: exceeded its progress deadline")
	for _, tc := range []struct {
		name   string
		break_ func(f *applytest.Engine, steps []*apply.Step)
		failed string
		want   map[string]dag.Status
		reason map[string]string
	}{
		{
			name:   "a deploy fails",
			break_: func(f *applytest.Engine, _ []*apply.Step) { f.Fail(applytest.OpExecute, ns, "api", broken) },
			failed: "api",
			want:   map[string]dag.Status{"db": dag.Succeeded, "docs": dag.Succeeded, "api": dag.Failed, "worker": dag.Succeeded, "web": dag.Skipped},
			reason: map[string]string{"web": "dependency api failed"},
		},
		{
			name:   "skips are transitive",
			break_: func(f *applytest.Engine, _ []*apply.Step) { f.Fail(applytest.OpExecute, ns, "db", broken) },
			failed: "db",
			want:   map[string]dag.Status{"db": dag.Failed, "docs": dag.Succeeded, "api": dag.Skipped, "worker": dag.Skipped, "web": dag.Skipped},
			reason: map[string]string{"api": "dependency db failed", "worker": "dependency db failed", "web": "dependency api skipped"},
		},
		{
			name: "a preparation fails",
			break_: func(_ *applytest.Engine, steps []*apply.Step) {
				steps[2].Prepare = func(context.Context, map[string]*release.Release) (*release.Prepared, error) { return nil, broken }
			},
			failed: "api",
			want:   map[string]dag.Status{"db": dag.Succeeded, "docs": dag.Succeeded, "api": dag.Failed, "worker": dag.Succeeded, "web": dag.Skipped},
			reason: map[string]string{"web": "dependency api failed"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := applytest.New()
			steps := shop(f)
			tc.break_(f, steps)
			res := execute(t, context.Background(), steps, apply.ExecOptions{Parallelism: 5})
			for id, want := range tc.want {
				r := res[id]
				if r.Status != want || r.Reason != tc.reason[id] {
					t.Errorf("%s: %s (%q), want %s (%q)", id, r.Status, r.Reason, want, tc.reason[id])
				}
				if want == dag.Skipped && len(f.CallsTo(ns, id)) > 0 {
					t.Errorf("skipped %s reached the engine: %v", id, f.CallsTo(ns, id))
				}
				if want == dag.Succeeded && r.Err != nil {
					t.Errorf("%s: %v", id, r.Err)
				}
			}
			if r := res[tc.failed]; !errors.Is(r.Err, broken) {
				t.Errorf("%s failed with %v, want %v", tc.failed, r.Err, broken)
			}
		})
	}
}

func TestAFailedDeployKeepsTheRecordItLeft(t *testing.T) {
	f := applytest.New()
	f.Seed(ns, "db", release.StatusDeployed)
	f.Fail(applytest.OpExecute, ns, "db", errors.New("timed out waiting for the condition"))
	res := execute(t, context.Background(), []*apply.Step{deploy(f, "db")}, apply.ExecOptions{})
	db := res["db"]
	if db.Status != dag.Failed || db.Release == nil || db.Release.Version != 2 || db.Release.Info.Status != release.StatusFailed || db.PreviousDeployed != 1 {
		t.Fatalf("db: %s, release %+v, previous deployed %d", db.Status, db.Release, db.PreviousDeployed)
	}
	if len(f.CallsTo(ns, "db")) != 1 {
		t.Fatalf("calls %v: a failed step of a run that is not atomic is left as it failed", f.CallsTo(ns, "db"))
	}
}

func TestPrepareIsGivenTheRecordsOfTheStepsThatSucceeded(t *testing.T) {
	f := applytest.New()
	f.Fail(applytest.OpExecute, ns, "broken", errors.New("broken"))
	api := deploy(f, "api", "db")
	var seen map[string]*release.Release
	prepare := api.Prepare
	api.Prepare = func(ctx context.Context, applied map[string]*release.Release) (*release.Prepared, error) {
		seen = maps.Clone(applied)
		return prepare(ctx, applied)
	}
	// Parallelism 1: db, then broken, then api.
	steps := []*apply.Step{deploy(f, "db"), deploy(f, "broken"), api}
	res := execute(t, context.Background(), steps, apply.ExecOptions{Parallelism: 1})
	if res["broken"].Status != dag.Failed || res["api"].Status != dag.Succeeded {
		t.Fatalf("broken %s, api %s", res["broken"].Status, res["api"].Status)
	}
	if !slices.Equal(slices.Sorted(maps.Keys(seen)), []string{"db"}) || seen["db"].Version != 1 || seen["db"].Info.Status != release.StatusDeployed {
		t.Fatalf("api was prepared with %v, want db's deployed record only", seen)
	}
}

func TestAStalePlanIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		history []release.Status
		check   bool
		expect  int
		stale   string // "": the step runs
	}{
		{name: "the revision the plan saw", history: []release.Status{release.StatusDeployed}, check: true, expect: 1},
		{name: "a first install", check: true, expect: 0},
		{name: "upgraded since the plan", history: []release.Status{release.StatusSuperseded, release.StatusDeployed}, check: true, expect: 1,
			stale: "stale plan: release shop/db is at revision 2, the plan saw revision 1"},
		{name: "installed since the plan", history: []release.Status{release.StatusDeployed}, check: true, expect: 0,
			stale: "stale plan: release shop/db is at revision 1, the plan saw revision 0"},
		{name: "uninstalled since the plan", check: true, expect: 3,
			stale: "stale plan: release shop/db is at revision 0, the plan saw revision 3"},
		{name: "not checked", history: []release.Status{release.StatusSuperseded, release.StatusDeployed}, check: false, expect: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := applytest.New()
			f.Seed(ns, "db", tc.history...)
			db := deploy(f, "db")
			db.CheckRevision, db.ExpectRevision = tc.check, tc.expect
			// Atomic: a refused step changed nothing, so nothing is restored.
			res := execute(t, context.Background(), []*apply.Step{db, deploy(f, "api", "db")}, apply.ExecOptions{Atomic: true})
			calls := f.CallsTo(ns, "db")
			if tc.stale == "" {
				if res["db"].Status != dag.Succeeded || len(calls) != 1 || calls[0].Op != applytest.OpExecute {
					t.Fatalf("db: %s %v, calls %v", res["db"].Status, res["db"].Err, calls)
				}
				return
			}
			if res["db"].Status != dag.Failed || fmt.Sprint(res["db"].Err) != tc.stale {
				t.Fatalf("db: %s %v, want failed: %s", res["db"].Status, res["db"].Err, tc.stale)
			}
			if len(calls) != 0 || res["db"].Release != nil || res["db"].Restored {
				t.Fatalf("a stale step reached the engine: %v", calls)
			}
			if res["api"].Status != dag.Skipped {
				t.Errorf("api: %s", res["api"].Status)
			}
		})
	}
}

// TestAStaleUninstallIsRefused: an uninstall is checked as a deploy is;
// a release upgraded (by helm, say) since the plan saw it is not removed.
func TestAStaleUninstallIsRefused(t *testing.T) {
	three := []release.Status{release.StatusSuperseded, release.StatusSuperseded, release.StatusDeployed}
	for _, tc := range []struct {
		name    string
		history []release.Status
		check   bool
		stale   string // "": the step runs
	}{
		{name: "the revision the plan saw", history: three[1:], check: true},
		{name: "upgraded since the plan", history: three, check: true,
			stale: "stale plan: release shop/legacy is at revision 3, the plan saw revision 2"},
		{name: "uninstalled since the plan", check: true,
			stale: "stale plan: release shop/legacy is at revision 0, the plan saw revision 2"},
		{name: "not checked", history: three, check: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := applytest.New()
			f.Seed(ns, "legacy", tc.history...)
			legacy := &apply.Step{ID: "legacy", Name: "legacy", Namespace: ns, Kind: apply.StepUninstall, Engine: f,
				Uninstall: release.UninstallRequest{Name: "legacy", Namespace: ns}, CheckRevision: tc.check, ExpectRevision: 2}
			res := execute(t, context.Background(), []*apply.Step{legacy}, apply.ExecOptions{})
			uninstalls := slices.DeleteFunc(f.CallsTo(ns, "legacy"), func(c applytest.Call) bool { return c.Op != applytest.OpUninstall })
			if tc.stale == "" {
				if res["legacy"].Status != dag.Succeeded || len(uninstalls) != 1 || f.History(ns, "legacy") != nil {
					t.Fatalf("legacy: %s %v, uninstalls %v", res["legacy"].Status, res["legacy"].Err, uninstalls)
				}
				return
			}
			if res["legacy"].Status != dag.Failed || fmt.Sprint(res["legacy"].Err) != tc.stale {
				t.Fatalf("legacy: %s %v, want failed: %s", res["legacy"].Status, res["legacy"].Err, tc.stale)
			}
			if len(uninstalls) != 0 || !slices.Equal(f.Statuses(ns, "legacy"), tc.history) {
				t.Fatalf("a stale uninstall ran: %v, records %v", uninstalls, f.Statuses(ns, "legacy"))
			}
		})
	}
}

func TestANoOpStepDoesNothing(t *testing.T) {
	f := applytest.New()
	f.Seed(ns, "cache", release.StatusDeployed)
	// CheckRevision: a no-op step's release is not even read.
	cache := &apply.Step{ID: "cache", Name: "cache", Namespace: ns, Kind: apply.StepNoOp, Engine: f, CheckRevision: true, ExpectRevision: 7}
	steps := []*apply.Step{cache, deploy(f, "api", "cache"), deploy(f, "broken")}
	f.Fail(applytest.OpExecute, ns, "broken", errors.New("broken"))
	res := execute(t, context.Background(), steps, apply.ExecOptions{Atomic: true})
	if r := res["cache"]; r.Status != dag.Succeeded || r.Release != nil || r.Restored || r.RestoreErr != nil {
		t.Fatalf("cache: %+v", r)
	}
	if calls := f.CallsTo(ns, "cache"); len(calls) != 0 {
		t.Fatalf("a no-op step called the engine: %v", calls)
	}
	if res["api"].Status != dag.Succeeded || !res["api"].Restored {
		t.Fatalf("api (after the no-op, restored as the run is atomic): %s, restored %v", res["api"].Status, res["api"].Restored)
	}
}

func TestUninstallSteps(t *testing.T) {
	for _, tc := range []struct {
		name        string
		keepHistory bool
		fail        error
		want        dag.Status
		records     []release.Status
	}{
		{name: "uninstalls", want: dag.Succeeded},
		{name: "keeps the history", keepHistory: true, want: dag.Succeeded, records: []release.Status{release.StatusSuperseded, release.StatusUninstalled}},
		{name: "fails", fail: errors.New("pre-delete hook failed"), want: dag.Failed, records: []release.Status{release.StatusSuperseded, release.StatusDeployed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := applytest.New()
			f.Seed(ns, "legacy", release.StatusSuperseded, release.StatusDeployed)
			if tc.fail != nil {
				f.Fail(applytest.OpUninstall, ns, "legacy", tc.fail)
			}
			req := release.UninstallRequest{Name: "legacy", Namespace: ns, Wait: true, KeepHistory: tc.keepHistory, RunID: "run-1"}
			legacy := &apply.Step{ID: "legacy", Name: "legacy", Namespace: ns, Kind: apply.StepUninstall, Engine: f, Uninstall: req}
			res := execute(t, context.Background(), []*apply.Step{legacy, deploy(f, "after", "legacy")}, apply.ExecOptions{Atomic: true})
			r := res["legacy"]
			if r.Status != tc.want || !errors.Is(r.Err, tc.fail) {
				t.Fatalf("legacy: %s %v, want %s %v", r.Status, r.Err, tc.want, tc.fail)
			}
			if calls := f.CallsTo(ns, "legacy"); len(calls) != 1 || calls[0].Op != applytest.OpUninstall || calls[0].Uninstall.RunID != req.RunID || calls[0].Uninstall.KeepHistory != req.KeepHistory || !calls[0].Uninstall.Wait {
				t.Fatalf("calls %+v, want the step's uninstall only (an uninstall is not restored)", calls)
			}
			if st := f.Statuses(ns, "legacy"); !slices.Equal(st, tc.records) {
				t.Errorf("records %v, want %v", st, tc.records)
			}
			if tc.fail != nil {
				if r.Release != nil || res["after"].Status != dag.Skipped {
					t.Errorf("release %v, after %s", r.Release, res["after"].Status)
				}
				return
			}
			if r.Release == nil || r.Release.Version != 2 || r.Release.Info.Status != release.StatusUninstalled {
				t.Errorf("legacy's record: %+v", r.Release)
			}
		})
	}
}

func TestACancelledRunStartsNoMoreSteps(t *testing.T) {
	for _, atomic := range []bool{false, true} {
		t.Run(fmt.Sprintf("atomic %v", atomic), func(t *testing.T) {
			f := applytest.New()
			f.Hold(applytest.OpExecute, ns, "db") // until cancelled
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// Parallelism 1: docs waits for db's slot.
			steps := []*apply.Step{deploy(f, "db"), deploy(f, "docs"), deploy(f, "api", "db"), deploy(f, "site", "docs")}
			wait := start(t, ctx, steps, apply.ExecOptions{Parallelism: 1, Atomic: atomic})
			if k := next(t, f); k != "shop/db" {
				t.Fatalf("%s started first", k)
			}
			cancel()
			res := wait()
			if r := res["db"]; r.Status != dag.Failed || !errors.Is(r.Err, context.Canceled) {
				t.Errorf("db: %s %v", r.Status, r.Err)
			}
			if r := res["docs"]; r.Status != dag.Cancelled || !errors.Is(r.Err, context.Canceled) {
				t.Errorf("docs: %s %v", r.Status, r.Err)
			}
			if r := res["api"]; r.Status != dag.Skipped || r.Reason != "dependency db failed" {
				t.Errorf("api: %s (%s)", r.Status, r.Reason)
			}
			if r := res["site"]; r.Status != dag.Skipped || r.Reason != "dependency docs cancelled" {
				t.Errorf("site: %s (%s)", r.Status, r.Reason)
			}
			for _, id := range []string{"docs", "api", "site"} {
				if calls := f.CallsTo(ns, id); len(calls) != 0 {
					t.Errorf("%s reached the engine after the run was cancelled: %v", id, calls)
				}
			}
			calls := f.CallsTo(ns, "db")
			if !atomic {
				if len(calls) != 1 || res["db"].Restored {
					t.Fatalf("db: calls %+v", calls)
				}
				return
			}
			// The interrupted install is uninstalled, with a live context.
			if len(calls) != 2 || calls[1].Op != applytest.OpUninstall || calls[1].CtxErr != nil || !res["db"].Restored {
				t.Fatalf("db: calls %+v, restored %v", calls, res["db"].Restored)
			}
		})
	}
}

func TestErrorsAreRedacted(t *testing.T) {
	f := applytest.New()
	invalid := errors.New(`Secret "shop/db" is invalid: data.password: Invalid value: "hunter2"`)
	f.Fail(applytest.OpExecute, ns, "db", invalid)
	db := deploy(f, "db")
	db.Prepare = f.Prepare(release.Request{Name: "db", Namespace: ns, Redact: sensitive.New([]string{"hunter2"})})
	res := execute(t, context.Background(), []*apply.Step{db}, apply.ExecOptions{})
	err := res["db"].Err
	if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), `Invalid value: "`+sensitive.Placeholder+`"`) {
		t.Fatalf("error %q", err)
	}
	if !errors.Is(err, invalid) {
		t.Fatalf("the masked error %q does not unwrap to the engine's", err)
	}
}

func TestExecuteWithoutAProgressView(t *testing.T) {
	f := applytest.New()
	f.Fail(applytest.OpExecute, ns, "db", errors.New("broken"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Every kind of report: a step that runs, one skipped, one cancelled.
	for _, c := range []context.Context{context.Background(), ctx} {
		res := apply.Execute(c, []*apply.Step{deploy(f, "db"), deploy(f, "api", "db")}, apply.ExecOptions{})
		if len(res) != 2 || res[1].Status != dag.Skipped && res[1].Status != dag.Cancelled {
			t.Fatalf("results %+v", res)
		}
	}
}
