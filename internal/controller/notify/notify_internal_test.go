package notify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
)

// approvalRequired is a Stack's delivery of ApprovalRequired to url,
// its events told to report.
func approvalRequired(url string, report func(typ, reason, note string)) Delivery {
	return Delivery{
		Index: 0, Target: v1alpha1.Notification{URL: url}, Event: v1alpha1.EventApprovalRequired, Digest: "sha256:abc",
		What: "spec.notifications[0] (ApprovalRequired of plan sha256:abc)", Namespace: "apps",
		Body:   func(v1alpha1.NotificationFormat) ([]byte, error) { return []byte(`{"event":"ApprovalRequired"}`), nil },
		Report: report,
	}
}

// A 5xx is retried; a 4xx is not; failures are events without the URL.
func TestDeliverRetriesAndReports(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	var notes []string
	n := New(nil)
	n.backoff = time.Millisecond
	ds := []Delivery{approvalRequired(srv.URL+"/token-xyz", func(_, reason, note string) { notes = append(notes, reason+": "+note) })}
	n.deliver(context.Background(), ds[0])
	if calls.Load() != 3 || len(notes) != 1 || !strings.HasPrefix(notes[0], "Notified:") {
		t.Fatalf("%d calls, events %q: want 3 calls, then Notified", calls.Load(), notes)
	}

	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1); http.NotFound(w, r) }))
	defer gone.Close()
	calls.Store(0)
	notes = nil
	ds[0].Target.URL = gone.URL + "/token-xyz"
	n.deliver(context.Background(), ds[0])
	if calls.Load() != 1 || len(notes) != 1 || !strings.Contains(notes[0], "404") || strings.Contains(notes[0], "token-xyz") || strings.Contains(notes[0], gone.URL) {
		t.Fatalf("%d calls, events %q: want 1 call and a NotificationFailed without the URL", calls.Load(), notes)
	}
}

// An endpoint that never answers costs each attempt its timeout, and ends
// in NotificationFailed: a worker is never stuck on it.
func TestDeliverTimesOut(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(stop)
	var notes []string
	n := New(nil)
	n.http.Timeout, n.attempts, n.backoff = 50*time.Millisecond, 2, time.Millisecond
	ds := []Delivery{approvalRequired(srv.URL+"/hang", func(_, reason, note string) { notes = append(notes, reason+": "+note) })}
	done := make(chan struct{})
	go func() { n.deliver(context.Background(), ds[0]); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("deliver is stuck on an endpoint that never answers")
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "NotificationFailed: spec.notifications[0]") || !strings.Contains(notes[0], "2 attempts") || strings.Contains(notes[0], srv.URL) {
		t.Fatalf("events %q", notes)
	}
	t.Log(notes[0])
}
