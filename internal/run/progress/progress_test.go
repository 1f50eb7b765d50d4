package progress

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/run/apply"
	"github.com/convoy-sh/convoy/internal/stack/dag"
)

// syncBuffer is a bytes.Buffer safe for the live view's drawing goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var rows = []apply.Row{{ID: "release.db", Namespace: "data", Name: "db"}, {ID: "release.web", Namespace: "shop", Name: "web"}}

func TestLiveViewRedrawsOneLinePerRelease(t *testing.T) {
	var buf syncBuffer
	l := NewLive(&buf, rows)
	l.Started("release.db")
	l.Event(release.Event{Namespace: "data", Release: "db", Phase: release.PhaseWaiting, Message: "waiting for 2 objects to be ready"})
	// The next frame (drawn every 200ms) shows the event.
	devtest.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(buf.String(), "release.db   waiting: waiting for 2 objects to be ready")
	}, func() string { return fmt.Sprintf("live view lacks db's phase:\n%q", buf.String()) })
	l.Finished("release.db", dag.Outcome[string]{Status: dag.Failed, Duration: 1500 * time.Millisecond, Err: errors.New("x")})
	l.Skipped("release.web", "dependency release.db failed")
	l.Close()
	out := buf.String()
	// The final frame: cursor moved up over the two lines, each rewritten.
	last := out[strings.LastIndex(out, "\x1b[2A"):]
	for _, want := range []string{"release.db   failed (1.5s)", "release.web  skipped (dependency release.db failed)"} {
		if !strings.Contains(last, want) {
			t.Errorf("final frame lacks %q:\n%q", want, last)
		}
	}
}

func TestLinesViewIsTimestampedLines(t *testing.T) {
	var buf bytes.Buffer
	l := NewLines(&buf, rows)
	fixed := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return fixed }
	l.Event(release.Event{Namespace: "data", Release: "db", Phase: release.PhaseApplying, Message: "applying 3 objects"})
	l.Skipped("release.web", "dependency release.db failed")
	want := "2026-11-21T12:00:00Z release.db: applying 3 objects\n2026-11-21T12:00:00Z release.web: skipped: dependency release.db failed\n"
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

// A failure the engine reported is not printed again when the step ends;
// an error it did not report is.
func TestLinesViewPrintsAFailureOnce(t *testing.T) {
	var buf bytes.Buffer
	l := NewLines(&buf, rows)
	fixed := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return fixed }
	cause := errors.New("pre-upgrade hook app/templates/hook.yaml: batch/v1 Job data/migrate: failed: BackoffLimitExceeded")
	l.Event(release.Event{Namespace: "data", Release: "db", Phase: release.PhaseFailed, Message: "revision 2 failed: " + cause.Error()})
	l.Finished("release.db", dag.Outcome[string]{Status: dag.Failed, Duration: 1500 * time.Millisecond, Err: cause})
	l.Finished("release.web", dag.Outcome[string]{Status: dag.Failed, Duration: time.Second, Err: errors.New("connection refused")})
	want := "2026-11-21T12:00:00Z release.db: revision 2 failed: " + cause.Error() + "\n" +
		"2026-11-21T12:00:00Z release.db: failed after 1.5s\n" +
		"2026-11-21T12:00:00Z release.web: failed after 1s: connection refused\n"
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestLiveViewShowsWhatAWaitIsBlockedOn(t *testing.T) {
	var buf syncBuffer
	l := NewLive(&buf, rows)
	l.Started("release.db")
	l.Event(release.Event{Namespace: "data", Release: "db", Phase: release.PhaseWaiting, Message: "waiting for v1 Service data/db", Blockers: []kube.ObjectStatus{{
		Ref: kube.Ref{Version: "v1", Kind: "Service", Namespace: "data", Name: "db"}, State: kube.StateNotReady, Message: "no load balancer address",
	}, {
		Ref: kube.Ref{Group: "batch", Version: "v1", Kind: "Job", Namespace: "data", Name: "migrate"}, State: kube.StateFailed, Message: "BackoffLimitExceeded",
		Details: []string{"pod migrate-x: container m: terminated: Error (exit code 1)"},
	}}})
	var missing []string
	devtest.Eventually(t, 10*time.Second, func() bool {
		missing = nil
		for _, want := range []string{
			"release.db   waiting: 2 not ready",
			"⏳ Service data/db: no load balancer address\n",
			"⏳ Job data/migrate: failed: BackoffLimitExceeded\n",
			"⏳     pod migrate-x: container m: terminated: Error (exit code 1)\n",
		} {
			if !strings.Contains(buf.String(), want) {
				missing = append(missing, want)
			}
		}
		return len(missing) == 0
	}, func() string { return fmt.Sprintf("live view lacks %q:\n%q", missing, buf.String()) })
	// Once the release moves on, its blockers go and the frame shrinks
	// with every stale line cleared.
	l.Finished("release.db", dag.Outcome[string]{Status: dag.Succeeded, Duration: time.Second})
	l.Close()
	out := buf.String()
	last := out[strings.LastIndex(out, "\x1b[5A"):]
	if strings.Contains(last, "⏳") || strings.Count(last, "\x1b[2K") != 5 {
		t.Fatalf("final frame:\n%q", last)
	}
}

// An API server that stops answering during a wait is named on a line of
// its own, kept while the wait's blockers are redrawn, and gone once the
// engine says it answers again.
func TestLiveViewNamesAnUnreachableAPIServer(t *testing.T) {
	var buf syncBuffer
	l := NewLive(&buf, rows)
	defer l.Close()
	l.Started("release.web")
	blockers := []kube.ObjectStatus{{Ref: kube.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}, State: kube.StateNotReady, Message: "0/1 replicas available"}}
	l.Event(release.Event{Namespace: "shop", Release: "web", Phase: release.PhaseWaiting, Message: "waiting for apps/v1 Deployment shop/web", Blockers: blockers})
	msg := "API server https://127.0.0.1:6443 unreachable since 12:03:04 (dial tcp 127.0.0.1:6443: connect: connection refused); giving up at 12:03:34 unless it answers"
	l.Event(release.Event{Namespace: "shop", Release: "web", Phase: release.PhaseWaiting, Message: msg, Outage: &kube.Outage{Server: "https://127.0.0.1:6443"}})
	l.Event(release.Event{Namespace: "shop", Release: "web", Phase: release.PhaseWaiting, Message: "waiting for apps/v1 Deployment shop/web", Blockers: blockers})
	// frame is the last frame drawn (each is written whole, every 200ms).
	frame := func() string {
		out := buf.String()
		return out[max(0, strings.LastIndex(out, "\x1b[2K"+"release.db")):]
	}
	devtest.Eventually(t, 10*time.Second, func() bool {
		f := frame()
		return strings.Contains(f, "release.web  waiting: 1 not ready") && strings.Contains(f, "⚠ "+msg+"\n") && strings.Contains(f, "⏳ Deployment shop/web: 0/1 replicas available")
	}, func() string {
		return fmt.Sprintf("the frame does not name the unreachable API server above the blockers:\n%q", frame())
	})
	l.Event(release.Event{Namespace: "shop", Release: "web", Phase: release.PhaseWaiting, Message: "API server answers again"})
	// The first frame drawn after the event has no outage line.
	devtest.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(frame(), "release.web  waiting: API server answers again")
	}, func() string { return fmt.Sprintf("the engine's news never reached the frame:\n%q", frame()) })
	if f := frame(); strings.Contains(f, "⚠") {
		t.Fatalf("the outage outlived its end:\n%q", f)
	}
}
