package controller

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/kube"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Event reasons of notifications.
const (
	ReasonNotified           = "Notified"
	ReasonNotificationFailed = "NotificationFailed"
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
	if c := findCond(st, CondReady); c != nil {
		readyMsg = c.Message
	}
	if c := findCond(st, CondDrifted); c != nil && c.Status == metav1.ConditionTrue && p != nil && p.Digest != "" {
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
		c := findCond(st, CondReady)
		if c != nil && c.Reason == ReasonApplyFailed && p != nil && p.Digest != "" {
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

// delivery is one POST of one notice to one of a Stack's notifications.
type delivery struct {
	stack   *v1alpha1.Stack // a copy, as the status was recorded
	index   int             // in spec.notifications
	target  v1alpha1.Notification
	notice  notice
	payload payload
	// pipeline, for a Pipeline's delivery, is its body and report its
	// events (stack is nil then).
	pipeline *pipelinePayload
	report   func(typ, reason, note string)
}

// tell records an event of a delivery on its Stack or Pipeline.
func (n *notifier) tell(d delivery, typ, reason, note string) {
	if d.report != nil {
		d.report(typ, reason, note)
		return
	}
	n.event(d.stack, typ, reason, "Notify", note)
}

// namespace is the namespace of the delivery's Stack or Pipeline (of
// its urlFrom Secret).
func (d delivery) namespace() string {
	if d.pipeline != nil {
		return d.pipeline.Namespace
	}
	return d.stack.Namespace
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

// body renders a delivery in its notification's format.
func (d delivery) body() ([]byte, error) {
	if d.pipeline != nil {
		return d.pipeline.body(d.target.Format)
	}
	pl := d.payload
	switch d.target.Format {
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

// notifier sends deliveries in the background, so that a slow or failing
// endpoint never holds a reconcile: each is tried a few times with a
// timeout, and a failure becomes a Warning event on the Stack.
type notifier struct {
	reader client.Reader
	// readers read a Stack's urlFrom Secret as its service account (nil:
	// reader); opts say whether other namespaces may be named.
	readers  *stackReaders
	opts     Options
	event    func(st *v1alpha1.Stack, typ, reason, action, note string)
	http     *http.Client
	attempts int
	backoff  time.Duration
	queue    chan delivery
}

func newNotifier(reader client.Reader, event func(st *v1alpha1.Stack, typ, reason, action, note string)) *notifier {
	return &notifier{
		reader: reader, event: event,
		http:     &http.Client{Timeout: 10 * time.Second},
		attempts: 3, backoff: 2 * time.Second,
		queue: make(chan delivery, 256),
	}
}

// enqueue hands deliveries to the workers without waiting; a full queue
// drops them, with an event.
func (n *notifier) enqueue(ds []delivery) {
	for _, d := range ds {
		select {
		case n.queue <- d:
		default:
			n.tell(d, corev1.EventTypeWarning, ReasonNotificationFailed,
				fmt.Sprintf("spec.notifications[%d]: %s of plan %s not sent: %d notifications are queued already", d.index, d.notice.event, d.notice.digest, cap(n.queue)))
		}
	}
}

// Start runs the workers until ctx ends (a manager Runnable: only the
// leader sends).
func (n *notifier) Start(ctx context.Context) error {
	const workers = 4
	done := make(chan struct{})
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				select {
				case <-ctx.Done():
					return
				case d := <-n.queue:
					n.deliver(ctx, d)
				}
			}
		}()
	}
	for range workers {
		<-done
	}
	return nil
}

// deliver sends one delivery, retrying transport errors, 429 and 5xx.
func (n *notifier) deliver(ctx context.Context, d delivery) {
	what := fmt.Sprintf("spec.notifications[%d] (%s of plan %s)", d.index, d.notice.event, d.notice.digest)
	if pl := d.pipeline; pl != nil {
		what = fmt.Sprintf("spec.notifications[%d] (%s of stage %s, digest %s)", d.index, d.notice.event, pl.Stage, pl.Digest)
	}
	if d.notice.event == v1alpha1.EventFailed && !strings.HasPrefix(d.notice.digest, "sha256:") {
		what = fmt.Sprintf("spec.notifications[%d] (%s)", d.index, d.notice.event)
	}
	fail := func(msg string) {
		n.tell(d, corev1.EventTypeWarning, ReasonNotificationFailed, what+": "+msg)
	}
	target, err := n.url(ctx, d)
	if err != nil {
		fail(err.Error())
		return
	}
	body, err := d.body()
	if err != nil {
		fail(err.Error())
		return
	}
	var last string
	for attempt := range n.attempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(n.backoff << (attempt - 1)):
			}
		}
		retry, err := n.post(ctx, target, body)
		if err == nil {
			n.tell(d, corev1.EventTypeNormal, ReasonNotified, what+": sent")
			return
		}
		last = redactURL(err.Error(), target)
		if !retry || ctx.Err() != nil {
			break
		}
	}
	fail(fmt.Sprintf("not sent (%s): %s", plural(n.attempts, "1 attempt", fmt.Sprintf("%d attempts", n.attempts)), last))
}

// post sends body; retry says whether another attempt may succeed.
func (n *notifier) post(ctx context.Context, target string, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return false, errors.New("the URL is not valid")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "convoy-controller")
	resp, err := n.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL
		}
		return true, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500, fmt.Errorf("the endpoint answered %s", resp.Status)
}

// url is the notification's URL: spec's, or read from its Secret. Errors
// name the Secret and key, never the URL.
func (n *notifier) url(ctx context.Context, d delivery) (string, error) {
	t := d.target
	raw := t.URL
	if t.URLFrom != nil {
		ref := t.URLFrom.SecretKeyRef
		namespace := d.namespace()
		if ref.Namespace != "" && ref.Namespace != namespace {
			if n.opts.noCrossNamespaceRefs() {
				return "", fmt.Errorf("urlFrom.secretKeyRef.namespace: %s is not the namespace %s (--no-cross-namespace-refs)", ref.Namespace, namespace)
			}
			namespace = ref.Namespace
		}
		where := fmt.Sprintf("urlFrom: v1 Secret %s/%s key %q", namespace, ref.Name, ref.Key)
		reader := n.reader
		if n.readers != nil && d.stack != nil {
			var err error
			if reader, err = n.readers.of(n.opts.impersonating(d.stack)); err != nil {
				return "", fmt.Errorf("%s: %w", where, err)
			}
		}
		var s corev1.Secret
		if err := reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, &s); err != nil {
			return "", fmt.Errorf("%s: %w", where, kube.Forbidden(err))
		}
		v, ok := s.Data[ref.Key]
		if !ok {
			return "", fmt.Errorf("%s: no such key", where)
		}
		raw = strings.TrimSpace(string(v))
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("%s: not an http(s) URL", where)
		}
	}
	if raw == "" {
		return "", errors.New("no url and no urlFrom")
	}
	return raw, nil
}

// redactURL removes a URL (which may be a credential) from a message.
func redactURL(msg, target string) string {
	msg = strings.ReplaceAll(msg, target, "(the URL)")
	if u, err := url.Parse(target); err == nil && u.RawQuery != "" {
		msg = strings.ReplaceAll(msg, u.RawQuery, "…")
	}
	return msg
}

// sendNotices records the reconcile's notices in the status (before it is
// written) and returns the function that sends them (after).
func (r *reconciler) sendNotices(st *v1alpha1.Stack, result string) func() {
	if r.notifier == nil {
		return func() {}
	}
	ds := recordNotices(st, noticesOf(st, result), time.Now())
	return func() { r.notifier.enqueue(ds) }
}

func findCond(st *v1alpha1.Stack, typ string) *metav1.Condition {
	return meta.FindStatusCondition(st.Status.Conditions, typ)
}
