package controller

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func waitingStack() *v1alpha1.Stack {
	st := &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "apps"}}
	st.Spec.Environment = "prod"
	st.Spec.Notifications = []v1alpha1.Notification{
		{URL: "http://hook.example/a", Events: []v1alpha1.NotificationEvent{v1alpha1.EventApplied}},
		{URL: "http://hook.example/b"},
	}
	st.Status.Plan = &v1alpha1.PlanStatus{Digest: "sha256:abc", Summary: "1 to upgrade", ConfigMapRef: &v1alpha1.LocalObjectReference{Name: "convoy-plan-shop"}}
	setCond(st, CondReady, metav1.ConditionFalse, ReasonApprovalRequired, "plan sha256:abc waits for approval")
	return st
}

// Each event is recorded once per digest, for the notifications that
// subscribe to it; status.notified is bounded.
func TestRecordNotices(t *testing.T) {
	st := waitingStack()
	ds := recordNotices(st, noticesOf(st, "approval_required"), time.Now())
	if len(ds) != 1 || ds[0].index != 1 || ds[0].payload.Plan.Digest != "sha256:abc" || ds[0].payload.Plan.ConfigMap != "convoy-plan-shop" {
		t.Fatalf("deliveries %+v: want notification 1 (all events) with the plan", ds)
	}
	if again := recordNotices(st, noticesOf(st, "approval_required"), time.Now()); len(again) != 0 {
		t.Fatalf("sent again: %+v", again)
	}
	for i := range v1alpha1.MaxNotified + 5 {
		recordNotices(st, []notice{{v1alpha1.EventFailed, failureDigest(ReasonSourceFailed, string(rune('a'+i))), "x"}}, time.Now())
	}
	if len(st.Status.Notified) != v1alpha1.MaxNotified {
		t.Fatalf("status.notified holds %d, want %d", len(st.Status.Notified), v1alpha1.MaxNotified)
	}
	none := waitingStack()
	none.Spec.Notifications = nil
	if ds := recordNotices(none, noticesOf(none, "approval_required"), time.Now()); ds != nil || none.Status.Notified != nil {
		t.Fatal("recorded without notifications")
	}
}

func TestNotificationBodies(t *testing.T) {
	st := waitingStack()
	d := recordNotices(st, noticesOf(st, "approval_required"), time.Now())[0]
	for format, check := range map[v1alpha1.NotificationFormat]func(map[string]any) bool{
		v1alpha1.FormatJSON: func(m map[string]any) bool {
			return m["event"] == "ApprovalRequired" && m["environment"] == "prod" && m["stack"] == "shop"
		},
		v1alpha1.FormatSlack: func(m map[string]any) bool {
			s, _ := m["text"].(string)
			return strings.Contains(s, "*Stack apps/shop (environment prod): ApprovalRequired*") && strings.Contains(s, "`sha256:abc`") && strings.Contains(s, "convoy-plan-shop")
		},
		v1alpha1.FormatMSTeams: func(m map[string]any) bool {
			atts, _ := m["attachments"].([]any)
			if m["type"] != "message" || len(atts) != 1 {
				return false
			}
			a, _ := atts[0].(map[string]any)
			return a["contentType"] == "application/vnd.microsoft.card.adaptive"
		},
	} {
		d.target.Format = format
		b, err := d.body()
		var m map[string]any
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil || !check(m) {
			t.Errorf("%s body %s (%v)", format, b, err)
		}
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
	n := newNotifier(nil, func(_ *v1alpha1.Stack, typ, reason, _, note string) { notes = append(notes, reason+": "+note) })
	n.backoff = time.Millisecond
	st := waitingStack()
	st.Spec.Notifications = []v1alpha1.Notification{{URL: srv.URL + "/token-xyz"}}
	ds := recordNotices(st, noticesOf(st, "approval_required"), time.Now())
	n.deliver(context.Background(), ds[0])
	if calls.Load() != 3 || len(notes) != 1 || !strings.HasPrefix(notes[0], "Notified:") {
		t.Fatalf("%d calls, events %q: want 3 calls, then Notified", calls.Load(), notes)
	}

	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1); http.NotFound(w, r) }))
	defer gone.Close()
	calls.Store(0)
	notes = nil
	ds[0].target.URL = gone.URL + "/token-xyz"
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
	n := newNotifier(nil, func(_ *v1alpha1.Stack, _, reason, _, note string) { notes = append(notes, reason+": "+note) })
	n.http.Timeout, n.attempts, n.backoff = 50*time.Millisecond, 2, time.Millisecond
	st := waitingStack()
	st.Spec.Notifications = []v1alpha1.Notification{{URL: srv.URL + "/hang"}}
	ds := recordNotices(st, noticesOf(st, "approval_required"), time.Now())
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

// A failure that repeats with another temporary name is the same notice,
// sent once; the same error under another reason is another.
func TestFailedNoticeKey(t *testing.T) {
	failing := func(reason, msg string) *v1alpha1.Stack {
		st := waitingStack()
		st.Status.Plan = nil
		st.Status.LastError = msg
		setCond(st, CondReady, metav1.ConditionFalse, reason, msg)
		return st
	}
	st := failing(ReasonSourceFailed, "spec.source: mkdir /cache/stacks/.pull-3315430801: read-only file system")
	if ds := recordNotices(st, noticesOf(st, "error"), time.Now()); len(ds) != 1 || ds[0].notice.event != v1alpha1.EventFailed {
		t.Fatalf("deliveries %+v: want one Failed", ds)
	}
	again := failing(ReasonSourceFailed, "spec.source: mkdir /cache/stacks/.pull-1187294016: read-only file system")
	again.Status.Notified = st.Status.Notified
	if ds := recordNotices(again, noticesOf(again, "error"), time.Now()); len(ds) != 0 {
		t.Fatalf("sent again with another temporary name: %+v", ds)
	}
	if len(again.Status.Notified) != 1 {
		t.Fatalf("status.notified %+v: want one entry", again.Status.Notified)
	}
	other := failing(ReasonPlanFailed, "spec.source: mkdir /cache/stacks/.pull-1187294016: read-only file system")
	other.Status.Notified = st.Status.Notified
	if ds := recordNotices(other, noticesOf(other, "error"), time.Now()); len(ds) != 1 {
		t.Fatalf("another reason: deliveries %+v, want one", ds)
	}
}
