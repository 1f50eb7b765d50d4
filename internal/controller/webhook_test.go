package controller_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// webhookInterval is the interval of the Stacks and Pipelines of the push
// receiver's tests: nothing but a push notification reconciles them
// within a test's time.
const webhookInterval = 10 * time.Minute

// tokenSecret creates the receiver's token Secret in ns.
func tokenSecret(t *testing.T, c client.Client, ns, token string) string {
	t.Helper()
	create(t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "convoy-webhook"}, StringData: map[string]string{"token": token}})
	return ns + "/convoy-webhook"
}

// syncBuffer is a log the controller writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
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

// digestIs: the Stack is Ready on digest.
func digestIs(digest string) func(*v1alpha1.Stack) bool {
	ready := isCond("Ready", metav1.ConditionTrue, "")
	return func(st *v1alpha1.Stack) bool {
		return ready(st) && st.Status.Source != nil && st.Status.Source.Digest == digest
	}
}

// The acceptance: a registry whose notifications call the
// receiver. A tag the Stack names, pushed again with new content, and a
// new version the Pipeline follows reach their Stacks at once, though
// the Stacks and the Pipeline are planned and polled every 10 minutes.
func TestPushNotificationReconcilesAtOnce(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	const token = "push-token-of-the-test"
	secret := tokenSecret(t, c, ns, token)
	addr := freeAddr(t)
	reg := sourcetest.StartRegistryWith(t, sourcetest.RegistryOptions{Notify: &sourcetest.NotifyEndpoint{
		URL: "http://" + addr + controller.WebhookPath, Authorization: "Bearer " + token,
	}})
	first := push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	// The Pipeline's stack: one release in namespace ns-staging.
	released := pushTo(t, reg, promotedStack(t, ns, "1.0.0", false), "stacks/shop:1.0.0")
	t.Cleanup(func() {
		_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), ns+"-staging", metav1.DeleteOptions{})
	})
	create(t, c, newStack(ns, "tagged", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.Interval = &metav1.Duration{Duration: webhookInterval}
	}))
	create(t, c, newStack(ns, "followed", "", func(st *v1alpha1.Stack) {
		st.Spec.Interval = &metav1.Duration{Duration: webhookInterval}
		st.Spec.Environment = "staging"
	}))
	create(t, c, &v1alpha1.Pipeline{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns},
		Spec: v1alpha1.PipelineSpec{
			Source:   "oci://" + reg.Host + "/stacks/shop",
			Follow:   v1alpha1.Follow{Semver: ">=1.0.0"},
			Interval: &metav1.Duration{Duration: webhookInterval},
			Stages:   []v1alpha1.Stage{{Name: "only", Stacks: v1alpha1.StackRefs("followed")}},
		},
	})
	metrics := freeAddr(t)
	var log syncBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controller log:\n%s", log.String())
		}
	})
	startController(t, ns, func(o *controller.Options) {
		o.WebhookListen, o.WebhookTokenSecret, o.MetricsAddress = addr, secret, metrics
		o.Logger = logr.FromSlogHandler(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	waitStack(t, c, ns, "tagged", 90*time.Second, "Ready on v1", digestIs(first))
	waitPipeline(t, c, ns, "shop", 90*time.Second, "verified 1.0.0", stageIs("only", v1alpha1.PhaseVerified, released))
	waitStack(t, c, ns, "followed", 90*time.Second, "Ready on 1.0.0", digestIs(released))

	// v1 again, with new content.
	start := time.Now()
	second := push(t, reg, stackDir(t, ns, "v2", ""), "v1")
	waitStack(t, c, ns, "tagged", 60*time.Second, "Ready on v1 pushed again", digestIs(second))
	t.Logf("push → Ready of the re-pushed tag: %s", time.Since(start).Round(10*time.Millisecond))
	if got := configMessage(t, c, ns, "api"); got != "api-hello-v2" {
		t.Fatalf("api's message is %q after the push, want api-hello-v2", got)
	}

	// A new version the Pipeline follows.
	start = time.Now()
	third := pushTo(t, reg, promotedStack(t, ns, "1.1.0", false), "stacks/shop:1.1.0")
	waitStack(t, c, ns, "followed", 60*time.Second, "Ready on 1.1.0", digestIs(third))
	t.Logf("push → Ready of the Pipeline's Stack: %s", time.Since(start).Round(10*time.Millisecond))
	p := getPipeline(t, c, ns, "shop")
	if l := p.Status.Latest; l == nil || l.Tag != "1.1.0" || l.Digest != third {
		t.Fatalf("the Pipeline's latest is not 1.1.0 %s:%s", third, describePipeline(p))
	}
	_, body := get(t, "http://"+metrics+"/metrics")
	if !strings.Contains(body, `convoy_controller_webhook_receipts_total{result="accepted"}`) {
		t.Errorf("/metrics counts no accepted notification")
	}
}

// The registry calls with a wrong token: each call is refused (401, and
// logged without the token; the registry retries its first refused event
// a second apart and sends none after it), and the Stack stays on what it
// had after a new push; so do notifications of that push without the
// token or with another scheme. The same notification with the Secret's
// token moves it, and a changed Secret's token is the one accepted.
func TestPushNotificationWrongToken(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	const token, wrong = "right-token-of-the-test", "wrong-token-of-the-test"
	secret := tokenSecret(t, c, ns, token)
	addr := freeAddr(t)
	reg := sourcetest.StartRegistryWith(t, sourcetest.RegistryOptions{Notify: &sourcetest.NotifyEndpoint{
		URL: "http://" + addr + controller.WebhookPath, Authorization: "Bearer " + wrong,
	}})
	first := push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "tagged", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.Interval = &metav1.Duration{Duration: webhookInterval}
	}))
	metrics := freeAddr(t)
	var log syncBuffer
	startController(t, ns, func(o *controller.Options) {
		o.WebhookListen, o.WebhookTokenSecret, o.MetricsAddress = addr, secret, metrics
		o.Logger = logr.FromSlogHandler(slog.NewTextHandler(&log, nil))
	})
	waitStack(t, c, ns, "tagged", 90*time.Second, "Ready on v1", digestIs(first))
	before := receipts(t, metrics, "unauthorized")
	second := push(t, reg, stackDir(t, ns, "v2", ""), "v1")
	deadline := time.Now().Add(60 * time.Second)
	for receipts(t, metrics, "unauthorized") == before {
		if time.Now().After(deadline) {
			t.Fatalf("the registry's notification with a wrong token was not refused in 60s; log:\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st := getStack(t, c, ns, "tagged"); st.Status.Source.Digest != first {
		t.Fatalf("the Stack moved to %s on a notification with a wrong token", st.Status.Source.Digest)
	}
	for _, auth := range []string{"", "Bearer", "Basic " + token, "Bearer " + wrong} {
		code, body := notify(t, addr, auth, reg.Host)
		if code != http.StatusUnauthorized {
			t.Fatalf("Authorization %q: %d %s, want 401", auth, code, body)
		}
	}
	if st := getStack(t, c, ns, "tagged"); st.Status.Source.Digest != first {
		t.Fatalf("the Stack moved to %s on notifications without the token", st.Status.Source.Digest)
	}
	if l := log.String(); strings.Contains(l, token) || strings.Contains(l, wrong) || !strings.Contains(l, "refused a registry notification") {
		t.Fatalf("the log holds a token, or no refusal:\n%s", l)
	}

	// The Secret's token: the Stack moves at once.
	if code, body := notify(t, addr, "Bearer "+token, reg.Host); code != http.StatusAccepted || !strings.Contains(body, "reconciling 1 Stacks") {
		t.Fatalf("the right token: %d %s", code, body)
	}
	waitStack(t, c, ns, "tagged", 60*time.Second, "Ready on v1 pushed again", digestIs(second))

	// A new token in the Secret is the one accepted (once the cache
	// holds the change); the old one is refused.
	var s corev1.Secret
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "convoy-webhook"}, &s); err != nil {
		t.Fatal(err)
	}
	s.Data = map[string][]byte{"token": []byte("rotated-" + token)}
	if err := c.Update(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		code, body := notify(t, addr, "Bearer rotated-"+token, reg.Host)
		if code == http.StatusAccepted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rotated token is still refused after 30s: %d %s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body := notify(t, addr, "Bearer "+token, reg.Host); code != http.StatusUnauthorized {
		t.Fatalf("the old token after the rotation: %d %s", code, body)
	}
}

// pushTo pushes a stack directory to the registry's path:tag.
func pushTo(t *testing.T, reg *sourcetest.Registry, dir, pathTag string) string {
	t.Helper()
	p, err := artifact.Push(context.Background(), artifact.Registry{}, dir, "oci://"+reg.Host+"/"+pathTag)
	if err != nil {
		t.Fatal(err)
	}
	return p.Digest
}

// notify POSTs a push of stacks/app:v1 on host to the receiver.
func notify(t *testing.T, addr, auth, host string) (int, string) {
	t.Helper()
	body := fmt.Sprintf(`{"events":[{"action":"push","target":{"mediaType":"application/vnd.oci.image.manifest.v1+json","repository":"stacks/app","tag":"v1"},"request":{"host":%q}}]}`, host)
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+controller.WebhookPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/vnd.docker.distribution.events.v2+json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// receipts is the receiver's count of notifications of a result.
func receipts(t *testing.T, metrics, result string) float64 {
	t.Helper()
	_, body := get(t, "http://"+metrics+"/metrics")
	var n float64
	prefix := fmt.Sprintf(`convoy_controller_webhook_receipts_total{result=%q} `, result)
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			fmt.Sscanf(v, "%g", &n)
		}
	}
	return n
}
