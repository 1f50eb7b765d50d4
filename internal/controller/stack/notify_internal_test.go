package stack

import (
	"encoding/json"
	"strings"
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
	setCond(st, v1alpha1.CondReady, metav1.ConditionFalse, v1alpha1.ReasonApprovalRequired, "plan sha256:abc waits for approval")
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
		recordNotices(st, []notice{{v1alpha1.EventFailed, failureDigest(v1alpha1.ReasonSourceFailed, string(rune('a'+i))), "x"}}, time.Now())
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
		b, err := d.body(d.target.Format)
		var m map[string]any
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil || !check(m) {
			t.Errorf("%s body %s (%v)", format, b, err)
		}
	}
}

// A failure that repeats with another temporary name is the same notice,
// sent once; the same error under another reason is another.
func TestFailedNoticeKey(t *testing.T) {
	failing := func(reason, msg string) *v1alpha1.Stack {
		st := waitingStack()
		st.Status.Plan = nil
		st.Status.LastError = msg
		setCond(st, v1alpha1.CondReady, metav1.ConditionFalse, reason, msg)
		return st
	}
	st := failing(v1alpha1.ReasonSourceFailed, "spec.source: mkdir /cache/stacks/.pull-3315430801: read-only file system")
	if ds := recordNotices(st, noticesOf(st, "error"), time.Now()); len(ds) != 1 || ds[0].notice.event != v1alpha1.EventFailed {
		t.Fatalf("deliveries %+v: want one Failed", ds)
	}
	again := failing(v1alpha1.ReasonSourceFailed, "spec.source: mkdir /cache/stacks/.pull-1187294016: read-only file system")
	again.Status.Notified = st.Status.Notified
	if ds := recordNotices(again, noticesOf(again, "error"), time.Now()); len(ds) != 0 {
		t.Fatalf("sent again with another temporary name: %+v", ds)
	}
	if len(again.Status.Notified) != 1 {
		t.Fatalf("status.notified %+v: want one entry", again.Status.Notified)
	}
	other := failing(v1alpha1.ReasonPlanFailed, "spec.source: mkdir /cache/stacks/.pull-1187294016: read-only file system")
	other.Status.Notified = st.Status.Notified
	if ds := recordNotices(other, noticesOf(other, "error"), time.Now()); len(ds) != 1 {
		t.Fatalf("another reason: deliveries %+v, want one", ds)
	}
}

// A Stack's delivery, handed to the notifier, names its notification and
// plan in its events, reports them on the Stack, and reads its urlFrom
// Secret in the Stack's namespace; a failure without a plan is named
// without a digest.
func TestStackDeliverySend(t *testing.T) {
	st := waitingStack()
	ds := recordNotices(st, noticesOf(st, "approval_required"), time.Now())
	var told []string
	event := func(on *v1alpha1.Stack, _, reason, action, note string) {
		told = append(told, on.Namespace+"/"+on.Name+" "+action+" "+reason+": "+note)
	}
	d := ds[0].send(event, nil)
	if d.What != "spec.notifications[1] (ApprovalRequired of plan sha256:abc)" || d.Namespace != "apps" || d.Index != 1 || d.Digest != "sha256:abc" {
		t.Fatalf("delivery %+v", d)
	}
	d.Report("Normal", "Notified", d.What+": sent")
	if len(told) != 1 || told[0] != "apps/shop Notify Notified: spec.notifications[1] (ApprovalRequired of plan sha256:abc): sent" {
		t.Fatalf("events %q", told)
	}
	b, err := d.Body(v1alpha1.FormatSlack)
	if err != nil || !strings.Contains(string(b), "Stack apps/shop (environment prod)") {
		t.Fatalf("slack body %s %v", b, err)
	}

	failing := waitingStack()
	failing.Status.Plan = nil
	failing.Status.LastError = "spec.source: not found"
	setCond(failing, v1alpha1.CondReady, metav1.ConditionFalse, v1alpha1.ReasonSourceFailed, failing.Status.LastError)
	fs := recordNotices(failing, noticesOf(failing, "error"), time.Now())
	if len(fs) != 1 {
		t.Fatalf("%d deliveries of a failure", len(fs))
	}
	if got := fs[0].send(event, nil).What; got != "spec.notifications[1] (Failed)" {
		t.Fatalf("a failure without a plan is named %q", got)
	}
}
