package devtest_test

import (
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
)

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	devtest.Eventually(t, time.Minute, func() bool { calls++; return calls == 3 }, func() string { return "never" })
	if calls != 3 {
		t.Fatalf("cond called %d times, want 3 (until it held)", calls)
	}
}

// fatalRecorder records Fatal instead of ending the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatal(args ...any) {
	r.msg = args[0].(string)
	panic(r)
}

func TestEventuallyFailsWithTheLastState(t *testing.T) {
	r := &fatalRecorder{TB: t}
	last := 0
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		devtest.Eventually(r, 50*time.Millisecond, func() bool { last++; return false }, func() string { return "gave up" })
	}()
	if r.msg != "gave up" {
		t.Fatalf("failure message %q, want %q", r.msg, "gave up")
	}
	if last < 2 {
		t.Fatalf("cond called %d times in 50ms", last)
	}
}
