package stack

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/notify"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// notice is one event of a Stack to tell its notifications about.
type notice struct {
	event   v1alpha1.NotificationEvent
	digest  string
	message string
}

// noticesOf are the events a reconcile's outcome and the Stack's status
// say happened. Each is sent once per digest (status.notified), so a
// Stack that keeps waiting, or a controller that restarts, sends nothing
// again.
func noticesOf(st *v1alpha1.Stack, result string) []notice {
	var out []notice
	p := st.Status.Plan
	readyMsg := ""
	if c := findCond(st, v1alpha1.CondReady); c != nil {
		readyMsg = c.Message
	}
	if c := findCond(st, v1alpha1.CondDrifted); c != nil && c.Status == metav1.ConditionTrue && p != nil && p.Digest != "" {
		out = append(out, notice{v1alpha1.EventDrifted, p.Digest, c.Message})
	}
	switch result {
	case "applied":
		out = append(out, notice{v1alpha1.EventApplied, st.Status.LastAppliedPlan, readyMsg})
	case "approval_required":
		if p != nil {
			out = append(out, notice{v1alpha1.EventApprovalRequired, p.Digest, readyMsg})
		}
	case "policy_denied":
		if p != nil {
			out = append(out, notice{v1alpha1.EventPolicyDenied, p.Digest, readyMsg})
		}
	case "error":
		msg := st.Status.LastError
		if msg == "" {
			msg = readyMsg
		}
		c := findCond(st, v1alpha1.CondReady)
		if c != nil && c.Reason == v1alpha1.ReasonApplyFailed && p != nil && p.Digest != "" {
			// One failed apply of a plan is one event, whatever its
			// retries say.
			out = append(out, notice{v1alpha1.EventFailed, p.Digest, msg})
		} else if msg != "" {
			reason := ""
			if c != nil {
				reason = c.Reason
			}
			out = append(out, notice{v1alpha1.EventFailed, failureDigest(reason, msg), msg})
		}
	}
	return out
}

// failureDigest identifies a failure that has no plan by the Ready
// condition's reason and the error without its random parts
// (stableMessage): the same failure is sent once, although each attempt
// names another temporary directory.
func failureDigest(reason, msg string) string {
	h := sha256.Sum256([]byte(reason + "\n" + stableMessage(msg)))
	return "error:" + hex.EncodeToString(h[:8])
}

// payload is the JSON body of a json-format notification.
type payload struct {
	Stack       string         `json:"stack"`
	Namespace   string         `json:"namespace"`
	Environment string         `json:"environment"`
	Event       string         `json:"event"`
	Message     string         `json:"message"`
	Source      string         `json:"source,omitempty"`
	Plan        *payloadPlan   `json:"plan,omitempty"`
	Revisions   map[string]int `json:"revisions,omitempty"`
	// ApprovedBy: who approved the plan applied (Applied) or, so far, the
	// plan waiting (ApprovalRequired).
	ApprovedBy []string  `json:"approvedBy,omitempty"`
	Time       time.Time `json:"time"`
}

type payloadPlan struct {
	Digest  string `json:"digest"`
	Summary string `json:"summary,omitempty"`
	// ConfigMap holds the plan's text (plan.txt) and markdown (plan.md),
	// in the Stack's namespace.
	ConfigMap string `json:"configMap,omitempty"`
}

// recordNotices records in status.notified the notices not sent before
// that some notification subscribes to, and returns their deliveries.
// The caller sends them once the status is written: a notice is sent at
// most once, also across restarts.
func recordNotices(st *v1alpha1.Stack, notices []notice, now time.Time) []delivery {
	if len(st.Spec.Notifications) == 0 {
		return nil
	}
	var out []delivery
	for _, n := range notices {
		if n.digest == "" || notified(st, n) {
			continue
		}
		var ds []delivery
		for i, target := range st.Spec.Notifications {
			if len(target.Events) == 0 || slices.Contains(target.Events, n.event) {
				ds = append(ds, delivery{index: i, target: target, notice: n})
			}
		}
		if len(ds) == 0 {
			continue
		}
		st.Status.Notified = append(st.Status.Notified, v1alpha1.NotifiedEvent{Event: n.event, Digest: n.digest, Time: &metav1.Time{Time: now}})
		if extra := len(st.Status.Notified) - v1alpha1.MaxNotified; extra > 0 {
			st.Status.Notified = slices.Delete(st.Status.Notified, 0, extra)
		}
		out = append(out, ds...)
	}
	if len(out) == 0 {
		return nil
	}
	snap := st.DeepCopy()
	for i := range out {
		out[i].stack = snap
		out[i].payload = payloadOf(snap, out[i].notice, now)
	}
	return out
}

func notified(st *v1alpha1.Stack, n notice) bool {
	return slices.ContainsFunc(st.Status.Notified, func(e v1alpha1.NotifiedEvent) bool {
		return e.Event == n.event && e.Digest == n.digest
	})
}

func payloadOf(st *v1alpha1.Stack, n notice, now time.Time) payload {
	pl := payload{
		Stack: st.Name, Namespace: st.Namespace, Environment: st.Spec.Environment,
		Event: string(n.event), Message: n.message, Time: now.UTC(),
	}
	if s := st.Status.Source; s != nil {
		pl.Source = s.Ref
	}
	if p := st.Status.Plan; p != nil && n.event != v1alpha1.EventFailed || p != nil && p.Digest == n.digest {
		pl.Plan = &payloadPlan{Digest: p.Digest, Summary: p.Summary}
		if p.ConfigMapRef != nil {
			pl.Plan.ConfigMap = p.ConfigMapRef.Name
		}
	}
	switch a := st.Status.LastAppliedApproval; {
	case n.event == v1alpha1.EventApplied && a != nil && a.Digest == n.digest:
		pl.ApprovedBy = a.ApprovedBy
	case n.event == v1alpha1.EventApprovalRequired && st.Status.Approval != nil && st.Status.Approval.Digest == n.digest:
		pl.ApprovedBy = st.Status.Approval.ApprovedBy
	}
	if n.event == v1alpha1.EventApplied || n.event == v1alpha1.EventFailed {
		pl.Revisions = map[string]int{}
		for _, r := range st.Status.Releases {
			pl.Revisions[r.Address] = r.Revision
		}
	}
	return pl
}

// delivery is one notice of a Stack to one of its notifications.
type delivery struct {
	stack   *v1alpha1.Stack // a copy, as the status was recorded
	index   int             // in spec.notifications
	target  v1alpha1.Notification
	notice  notice
	payload payload
}

// send is the delivery for the notifier: its events are the Stack's, its
// urlFrom Secret read by reader (nil: the notifier's).
func (d delivery) send(event func(st *v1alpha1.Stack, typ, reason, action, note string), reader func() (client.Reader, error)) notify.Delivery {
	what := fmt.Sprintf("spec.notifications[%d] (%s of plan %s)", d.index, d.notice.event, d.notice.digest)
	if d.notice.event == v1alpha1.EventFailed && !strings.HasPrefix(d.notice.digest, "sha256:") {
		what = fmt.Sprintf("spec.notifications[%d] (%s)", d.index, d.notice.event)
	}
	return notify.Delivery{
		Index: d.index, Target: d.target, Event: d.notice.event, Digest: d.notice.digest, What: what,
		Namespace: d.stack.Namespace, Reader: reader, Body: d.body,
		Report: func(typ, reason, note string) { event(d.stack, typ, reason, "Notify", note) },
	}
}

// body renders a delivery in a notification format.
func (d delivery) body(format v1alpha1.NotificationFormat) ([]byte, error) {
	pl := d.payload
	switch format {
	case v1alpha1.FormatSlack:
		return json.Marshal(map[string]string{"text": chatText(pl, "*", "`")})
	case v1alpha1.FormatMSTeams:
		card := map[string]any{
			"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
			"type":    "AdaptiveCard", "version": "1.4",
			"body": []map[string]any{
				{"type": "TextBlock", "weight": "Bolder", "size": "Medium", "wrap": true, "text": fmt.Sprintf("Stack %s/%s: %s", pl.Namespace, pl.Stack, pl.Event)},
				{"type": "TextBlock", "wrap": true, "text": chatText(pl, "**", "`")},
			},
		}
		return json.Marshal(map[string]any{
			"type":        "message",
			"attachments": []map[string]any{{"contentType": "application/vnd.microsoft.card.adaptive", "content": card}},
		})
	}
	return json.Marshal(pl)
}

// chatText is a notice as a chat message, in markdown with the given bold
// and code marks.
func chatText(pl payload, bold, code string) string {
	var b strings.Builder
	env := ""
	if pl.Environment != "" {
		env = " (environment " + pl.Environment + ")"
	}
	fmt.Fprintf(&b, "%sStack %s/%s%s: %s%s\n%s", bold, pl.Namespace, pl.Stack, env, pl.Event, bold, pl.Message)
	if p := pl.Plan; p != nil {
		fmt.Fprintf(&b, "\nPlan %s%s%s: %s", code, p.Digest, code, p.Summary)
		if p.ConfigMap != "" {
			fmt.Fprintf(&b, "\nThe plan: %skubectl get configmap %s -n %s -o jsonpath='{.data.plan\\.md}'%s", code, p.ConfigMap, pl.Namespace, code)
		}
	}
	return b.String()
}

// sendNotices records the reconcile's notices in the status (before it is
// written) and returns the function that sends them (after).
func (r *reconciler) sendNotices(st *v1alpha1.Stack, result string) func() {
	if r.notifier == nil {
		return func() {}
	}
	var sends []notify.Delivery
	for _, d := range recordNotices(st, noticesOf(st, result), time.Now()) {
		var reader func() (client.Reader, error)
		if r.readers != nil {
			// The urlFrom Secret is read as the Stack's service account.
			reader = func() (client.Reader, error) { return r.readers.of(r.opts.impersonating(d.stack)) }
		}
		sends = append(sends, d.send(r.event, reader))
	}
	return func() { r.notifier.Enqueue(sends) }
}

func findCond(st *v1alpha1.Stack, typ string) *metav1.Condition {
	return meta.FindStatusCondition(st.Status.Conditions, typ)
}
