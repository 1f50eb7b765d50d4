package dag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeExec records what ran and when; nodes listed in fail fail.
type fakeExec struct {
	mu       sync.Mutex
	fail     map[string]bool
	delay    time.Duration
	ran      []string // completion order
	running  int
	peak     int
	restored []string
	runStart map[string]int // sequence number at start
	seq      int
	finished map[string]int
}

func newFake(fail ...string) *fakeExec {
	f := &fakeExec{fail: map[string]bool{}, runStart: map[string]int{}, finished: map[string]int{}}
	for _, id := range fail {
		f.fail[id] = true
	}
	return f
}

func (f *fakeExec) Run(ctx context.Context, id string) error {
	f.mu.Lock()
	f.seq++
	f.runStart[id] = f.seq
	f.running++
	f.peak = max(f.peak, f.running)
	f.mu.Unlock()
	select {
	case <-time.After(f.delay):
	case <-ctx.Done():
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running--
	f.seq++
	f.finished[id] = f.seq
	f.ran = append(f.ran, id)
	if f.fail[id] {
		return errors.New(id + " broke")
	}
	return nil
}

func (f *fakeExec) Restore(_ context.Context, id string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.restored = append(f.restored, id)
	return true, nil
}

// shop: db ← api ← web, db ← worker, docs independent.
var shop = []Node[string]{
	{ID: "db"},
	{ID: "docs"},
	{ID: "api", DependsOn: []string{"db"}},
	{ID: "worker", DependsOn: []string{"db"}},
	{ID: "web", DependsOn: []string{"api"}},
}

func statuses(out []Outcome[string]) map[string]Status {
	m := map[string]Status{}
	for _, o := range out {
		m[o.ID] = o.Status
	}
	return m
}

func TestWalkRespectsDependencies(t *testing.T) {
	f := newFake()
	f.delay = 20 * time.Millisecond
	out := Walk(context.Background(), shop, f, WalkOptions[string]{Parallelism: 5})
	for _, n := range shop {
		if statuses(out)[n.ID] != Succeeded {
			t.Fatalf("%s: %v", n.ID, statuses(out))
		}
		for _, d := range n.DependsOn {
			if f.runStart[n.ID] < f.finished[d] {
				t.Errorf("%s started before its dependency %s finished", n.ID, d)
			}
		}
	}
	if f.peak < 2 {
		t.Errorf("independent releases never ran concurrently (peak %d)", f.peak)
	}
}

func TestWalkBoundsParallelism(t *testing.T) {
	var nodes []Node[string]
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		nodes = append(nodes, Node[string]{ID: id})
	}
	f := newFake()
	f.delay = 20 * time.Millisecond
	Walk(context.Background(), nodes, f, WalkOptions[string]{Parallelism: 3})
	if f.peak != 3 {
		t.Fatalf("peak concurrency %d, want exactly 3", f.peak)
	}
}

func TestFailureSkipsDependentsOnly(t *testing.T) {
	f := newFake("api")
	var skipped []string
	out := Walk(context.Background(), shop, f, WalkOptions[string]{OnSkip: func(id, _ string) { skipped = append(skipped, id) }})
	want := map[string]Status{"db": Succeeded, "docs": Succeeded, "api": Failed, "worker": Succeeded, "web": Skipped}
	got := statuses(out)
	for id, st := range want {
		if got[id] != st {
			t.Errorf("%s: %s, want %s", id, got[id], st)
		}
	}
	if slices.Contains(f.ran, "web") || !slices.Equal(skipped, []string{"web"}) {
		t.Fatalf("ran %v, skipped %v", f.ran, skipped)
	}
	for _, o := range out {
		if o.ID == "web" && o.Reason != "dependency api failed" {
			t.Errorf("skip reason %q", o.Reason)
		}
		if o.Restored {
			t.Errorf("%s restored although the walk is not atomic", o.ID)
		}
	}
}

func TestSkipsAreTransitive(t *testing.T) {
	f := newFake("db")
	got := statuses(Walk(context.Background(), shop, f, WalkOptions[string]{}))
	for _, id := range []string{"api", "worker", "web"} {
		if got[id] != Skipped {
			t.Errorf("%s: %s, want skipped", id, got[id])
		}
	}
	if got["docs"] != Succeeded {
		t.Errorf("independent docs: %s", got["docs"])
	}
}

func TestAtomicRestoresEverythingThatRanDependentsFirst(t *testing.T) {
	f := newFake("web")
	out := Walk(context.Background(), shop, f, WalkOptions[string]{Atomic: true, Parallelism: 1})
	// Everything ran (web last, failing); restore goes in reverse
	// topological order.
	if want := []string{"web", "worker", "api", "docs", "db"}; !slices.Equal(f.restored, want) {
		t.Fatalf("restored %v, want %v", f.restored, want)
	}
	for _, o := range out {
		if !o.Restored {
			t.Errorf("%s not marked restored", o.ID)
		}
	}
}

func TestAtomicWithoutFailureRestoresNothing(t *testing.T) {
	f := newFake()
	Walk(context.Background(), shop, f, WalkOptions[string]{Atomic: true})
	if len(f.restored) != 0 {
		t.Fatalf("restored %v after a successful walk", f.restored)
	}
}

func TestCancelledWalkStartsNothingMore(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := newFake()
	f.delay = time.Hour // db blocks until cancelled
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	var told []string
	got := statuses(Walk(ctx, []Node[string]{{ID: "db"}, {ID: "api", DependsOn: []string{"db"}}}, f, WalkOptions[string]{
		OnCancel: func(id string, err error) { told = append(told, fmt.Sprintf("%s: %v", id, err)) },
	}))
	if slices.Contains(f.ran, "api") || got["api"] != Cancelled {
		t.Fatalf("api ran after cancellation: %v", got)
	}
	if !slices.Equal(told, []string{"api: context canceled"}) {
		t.Fatalf("OnCancel told %q, want api's cancellation", told)
	}
}

func TestReverseFlipsEdges(t *testing.T) {
	r := Reverse(shop)
	ids := make([]string, len(r))
	for i, n := range r {
		ids[i] = n.ID
	}
	if !slices.Equal(ids, []string{"web", "worker", "api", "docs", "db"}) {
		t.Fatalf("order %v", ids)
	}
	for _, n := range r {
		if n.ID == "db" && !(slices.Contains(n.DependsOn, "api") && slices.Contains(n.DependsOn, "worker")) {
			t.Fatalf("db must wait for its dependents: %v", n.DependsOn)
		}
	}
}

// instance is a typed ID, as config.ReleaseInstanceAddr is.
type instance struct {
	name string
	key  int
}

func (i instance) String() string { return fmt.Sprintf("release.%s[%d]", i.name, i.key) }

type typedExec struct{ fail instance }

func (x typedExec) Run(_ context.Context, id instance) error {
	if id == x.fail {
		return errors.New("broke")
	}
	return nil
}

func (typedExec) Restore(context.Context, instance) (bool, error) { return false, nil }

func TestWalkTypedIDs(t *testing.T) {
	db, web := instance{"db", 0}, instance{"web", 1}
	out := Walk(context.Background(), []Node[instance]{{ID: db}, {ID: web, DependsOn: []instance{db}}}, typedExec{fail: db}, WalkOptions[instance]{})
	if out[0].Status != Failed || out[1].Status != Skipped {
		t.Fatalf("outcomes %+v", out)
	}
	if out[1].Reason != "dependency release.db[0] failed" {
		t.Errorf("skip reason %q names the dependency by its String method", out[1].Reason)
	}
}
