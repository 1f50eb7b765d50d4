package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Event reasons of notifications.
const (
	ReasonNotified           = "Notified"
	ReasonNotificationFailed = "NotificationFailed"
)

// Delivery is one POST of one notice to one notification of a Stack or a
// Pipeline.
type Delivery struct {
	// Index is the notification's, in spec.notifications.
	Index  int
	Target v1alpha1.Notification
	// Event and Digest are the notice's: what happened, to which plan
	// or digest.
	Event  v1alpha1.NotificationEvent
	Digest string
	// What names the delivery in its events ("spec.notifications[0]
	// (Applied of plan sha256:…)").
	What string
	// Namespace is the object's, where its urlFrom Secret is unless the
	// reference names another.
	Namespace string
	// Reader reads the urlFrom Secret (nil: the notifier's reader): a
	// Stack's as its service account.
	Reader func() (client.Reader, error)
	// Body renders the notice in a notification format.
	Body func(v1alpha1.NotificationFormat) ([]byte, error)
	// Report records an event of the delivery on its object.
	Report func(typ, reason, note string)
}

// Notifier sends deliveries in the background, so that a slow or failing
// endpoint never holds a reconcile: each is tried a few times with a
// timeout, and a failure becomes a Warning event on the Stack or
// Pipeline.
type Notifier struct {
	reader client.Reader
	// NoCrossNamespaceRefs refuses urlFrom Secrets of other namespaces
	// (--no-cross-namespace-refs).
	NoCrossNamespaceRefs bool
	// Fence, when not nil, is asked before each POST: an error (this
	// replica may no longer lead) drops the delivery unsent.
	Fence    func() error
	http     *http.Client
	attempts int
	backoff  time.Duration
	queue    chan Delivery
}

// New is a notifier reading urlFrom Secrets with reader (unless a
// delivery brings its own).
func New(reader client.Reader) *Notifier {
	return &Notifier{
		reader:   reader,
		http:     &http.Client{Timeout: 10 * time.Second},
		attempts: 3, backoff: 2 * time.Second,
		queue: make(chan Delivery, 256),
	}
}

// Enqueue hands deliveries to the workers without waiting; a full queue
// drops them, with an event.
func (n *Notifier) Enqueue(ds []Delivery) {
	for _, d := range ds {
		select {
		case n.queue <- d:
		default:
			d.Report(corev1.EventTypeWarning, ReasonNotificationFailed,
				fmt.Sprintf("spec.notifications[%d]: %s of plan %s not sent: %d notifications are queued already", d.Index, d.Event, d.Digest, cap(n.queue)))
		}
	}
}

// Start runs the workers until ctx ends (a manager Runnable: only the
// leader sends).
func (n *Notifier) Start(ctx context.Context) error {
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
func (n *Notifier) deliver(ctx context.Context, d Delivery) {
	what := d.What
	fail := func(msg string) {
		d.Report(corev1.EventTypeWarning, ReasonNotificationFailed, what+": "+msg)
	}
	target, err := n.url(ctx, d)
	if err != nil {
		fail(err.Error())
		return
	}
	body, err := d.Body(d.Target.Format)
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
		if n.Fence != nil && n.Fence() != nil {
			return // another replica leads, and notifies
		}
		retry, err := n.post(ctx, target, body)
		if err == nil {
			d.Report(corev1.EventTypeNormal, ReasonNotified, what+": sent")
			return
		}
		last = redactURL(err.Error(), target)
		if !retry || ctx.Err() != nil {
			break
		}
	}
	attempts := "1 attempt"
	if n.attempts != 1 {
		attempts = fmt.Sprintf("%d attempts", n.attempts)
	}
	fail(fmt.Sprintf("not sent (%s): %s", attempts, last))
}

// post sends body; retry says whether another attempt may succeed.
func (n *Notifier) post(ctx context.Context, target string, body []byte) (retry bool, err error) {
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
func (n *Notifier) url(ctx context.Context, d Delivery) (string, error) {
	t := d.Target
	raw := t.URL
	if t.URLFrom != nil {
		ref := t.URLFrom.SecretKeyRef
		namespace := d.Namespace
		if ref.Namespace != "" && ref.Namespace != namespace {
			if n.NoCrossNamespaceRefs {
				return "", fmt.Errorf("urlFrom.secretKeyRef.namespace: %s is not the namespace %s (--no-cross-namespace-refs)", ref.Namespace, namespace)
			}
			namespace = ref.Namespace
		}
		where := fmt.Sprintf("urlFrom: v1 Secret %s/%s key %q", namespace, ref.Name, ref.Key)
		reader := n.reader
		if d.Reader != nil {
			var err error
			if reader, err = d.Reader(); err != nil {
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
