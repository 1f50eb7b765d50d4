package controller

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// A manifest push as distribution v3.1 sends it (one event per request;
// some fields left out).
const pushEnvelope = `{
   "events": [
      {
         "id": "0b1f8a5e-4f4b-4a0e-9d1c-3f3c7c2a1b00",
         "timestamp": "2026-11-28T04:40:00.000000000Z",
         "action": "push",
         "target": {
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": "sha256:6c3c624b58dbbcd3c0dd82b4c53f04194d1247c6eebdaab7c610cf7d66709b3b",
            "size": 528,
            "length": 528,
            "repository": "stacks/app",
            "url": "http://127.0.0.1:5000/v2/stacks/app/manifests/sha256:6c3c624b58dbbcd3c0dd82b4c53f04194d1247c6eebdaab7c610cf7d66709b3b",
            "tag": "v1"
         },
         "request": {"id": "r1", "addr": "127.0.0.1:40000", "host": "127.0.0.1:5000", "method": "PUT", "useragent": "convoy"},
         "actor": {},
         "source": {"addr": "host:5000", "instanceID": "i1"}
      }
   ]
}`

func TestPushedRepositories(t *testing.T) {
	blob := `{"events":[{"action":"push","target":{"mediaType":"application/octet-stream","digest":"sha256:aa","repository":"stacks/app","url":"http://r/v2/stacks/app/blobs/sha256:aa"},"request":{"host":"127.0.0.1:5000"}}]}`
	pull := `{"events":[{"action":"pull","target":{"mediaType":"application/vnd.oci.image.manifest.v1+json","repository":"stacks/app","tag":"v1"},"request":{"host":"127.0.0.1:5000"}}]}`
	byDigest := `{"events":[{"action":"push","target":{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"sha256:bb","repository":"Stacks/App"},"request":{"host":"Registry.Example:443"}}]}`
	tests := []struct {
		name, body string
		repos      []string
		ignored    int
		err        string
	}{
		{name: "manifest push by tag", body: pushEnvelope, repos: []string{"127.0.0.1:5000/stacks/app"}},
		{name: "blob push", body: blob, ignored: 1},
		{name: "pull", body: pull, ignored: 1},
		{name: "index by digest", body: strings.ReplaceAll(byDigest, "Stacks/App", "stacks/app"), repos: []string{"registry.example:443/stacks/app"}},
		{name: "docker hub", body: strings.ReplaceAll(pushEnvelope, "127.0.0.1:5000", "docker.io"), repos: []string{"registry-1.docker.io/stacks/app"}},
		{name: "two pushes of one repository", body: `{"events":[` + pushEvent("r:5000", "a", "v1") + `,` + pushEvent("r:5000", "a", "v2") + `]}`, repos: []string{"r:5000/a"}},
		{name: "not JSON", body: "push!", err: "the body is not a registry notification"},
		{name: "no events", body: `{"kind":"push"}`, err: `no "events" list`},
		{name: "no repository", body: `{"events":[` + pushEvent("r:5000", "", "v1") + `]}`, err: "events[0] (push): target.repository is empty"},
		{name: "no host", body: `{"events":[` + pushEvent("", "a", "v1") + `]}`, err: "events[0] (push of a): request.host is empty"},
		{name: "bad repository", body: byDigest, err: "events[0] (push): Registry.Example:443/Stacks/App is not a repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pushed, ignored, err := manifestPushes([]byte(tt.body))
			repos := repositoriesOf(pushed)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(repos, " ") != strings.Join(tt.repos, " ") || ignored != tt.ignored {
				t.Fatalf("repos %q ignored %d, want %q %d", repos, ignored, tt.repos, tt.ignored)
			}
		})
	}
}

func pushEvent(host, repo, tag string) string {
	return `{"action":"push","target":{"mediaType":"application/vnd.oci.image.manifest.v1+json","repository":"` + repo + `","tag":"` + tag + `"},"request":{"host":"` + host + `"}}`
}

// A Stack's and a Pipeline's sources name their repository as a push
// does: by host and path, the tag and digest aside.
func TestSourceRepositoryKeys(t *testing.T) {
	for src, want := range map[string]string{
		"oci://127.0.0.1:5000/stacks/app:v1":                "127.0.0.1:5000/stacks/app",
		"oci://127.0.0.1:5000/stacks/app@sha256:" + hex64(): "127.0.0.1:5000/stacks/app",
		"oci://Registry.Example/team/app:1.0.0":             "registry.example/team/app",
		"oci://docker.io/team/app:1":                        "registry-1.docker.io/team/app",
		"":                                                  "",
		"https://example/app":                               "",
	} {
		st := &v1alpha1.Stack{Spec: v1alpha1.StackSpec{Source: src}}
		if got := stackRepositoryKey(st); got != want {
			t.Errorf("Stack source %q: key %q, want %q", src, got, want)
		}
	}
	p := &v1alpha1.Pipeline{Spec: v1alpha1.PipelineSpec{Source: "oci://127.0.0.1:5000/stacks/app"}}
	if got := pipelineRepositoryKey(p); got != "127.0.0.1:5000/stacks/app" {
		t.Errorf("Pipeline key %q", got)
	}
}

func hex64() string { return strings.Repeat("ab", 32) }

// A Pipeline's push is cleared once a listing saw it, not when a newer
// push came during the listing, and forgotten after pushSettle.
func TestPipelinePushes(t *testing.T) {
	p := newPushes()
	now := time.Unix(1000, 0)
	p.now = func() time.Time { return now }
	k := types.NamespacedName{Namespace: "ns", Name: "app"}
	if _, ok := p.pipeline(k); ok {
		t.Fatal("a push before any")
	}
	p.pushedPipeline(k, "1.1.0", "sha256:b")
	first, _ := p.pipeline(k)
	p.pushedPipeline(k, "1.2.0", "sha256:c") // during the listing
	p.seen(k, first)
	second, ok := p.pipeline(k)
	if !ok || second.tag != "1.2.0" {
		t.Fatal("the push during the listing was forgotten")
	}
	p.seen(k, second)
	if _, ok := p.pipeline(k); ok {
		t.Fatal("a seen push is still pending")
	}
	p.pushedPipeline(k, "1.3.0", "sha256:d")
	now = now.Add(pushSettle + time.Second)
	if _, ok := p.pipeline(k); ok {
		t.Fatal("a push older than pushSettle is still pending")
	}
	var none *pushes
	none.seen(k, second)
	if _, ok := none.pipeline(k); ok {
		t.Fatal("no receiver, yet a push")
	}
}

// Whether a listing saw a push: semver lists the tags (the pushed tag
// among them), a followed tag resolves to the pushed digest.
func TestSawPush(t *testing.T) {
	m := pipelinePush{seq: 1, tag: "1.1.0", digest: "sha256:b"}
	for _, tt := range []struct {
		name, follow string
		tags         []string
		digest       string
		want         bool
	}{
		{"semver, tag listed", "", []string{"1.0.0", "1.1.0"}, "", true},
		{"semver, tag not listed yet", "", []string{"1.0.0"}, "", false},
		{"followed tag on the pushed digest", "1.1.0", nil, "sha256:b", true},
		{"followed tag still on the old digest", "1.1.0", nil, "sha256:a", false},
		{"another tag than the followed", "stable", nil, "sha256:a", true},
	} {
		if got := m.sawPush(tt.follow, tt.tags, tt.digest); got != tt.want {
			t.Errorf("%s: %t", tt.name, got)
		}
	}
	if !(pipelinePush{seq: 1, digest: "sha256:b"}).sawPush("", []string{}, "") {
		t.Error("a push by digest waits for a tag")
	}
}

// A Stack whose tag was pushed is awaited until it fetched the pushed
// digest (the registry tags after it notifies), for at most pushSettle;
// other tags and pinned digests are not.
func TestStackAwaitsPushedTag(t *testing.T) {
	p := newPushes()
	now := time.Unix(1000, 0)
	p.now = func() time.Time { return now }
	p.pushedTag("127.0.0.1:5000/stacks/app", "v1", "sha256:b")
	st := func(src, fetched string) *v1alpha1.Stack {
		return &v1alpha1.Stack{Spec: v1alpha1.StackSpec{Source: src}, Status: v1alpha1.StackStatus{Source: &v1alpha1.SourceStatus{Digest: fetched}}}
	}
	if got := p.awaited(st("oci://127.0.0.1:5000/stacks/app:v2", "sha256:a")); got != "" {
		t.Fatalf("another tag awaits %s", got)
	}
	if got := p.awaited(st("oci://127.0.0.1:5000/stacks/app@sha256:"+hex64(), "sha256:a")); got != "" {
		t.Fatalf("a pinned digest awaits %s", got)
	}
	if got := p.awaited(st("oci://127.0.0.1:5000/stacks/app:v1", "sha256:a")); got != "sha256:b" {
		t.Fatalf("the old digest awaits %q, want sha256:b", got)
	}
	if got := p.awaited(st("oci://127.0.0.1:5000/stacks/app:v1", "sha256:b")); got != "" {
		t.Fatalf("the pushed digest fetched, still awaits %s", got)
	}
	p.pushedTag("127.0.0.1:5000/stacks/app", "v1", "sha256:c")
	now = now.Add(pushSettle + time.Second)
	if got := p.awaited(st("oci://127.0.0.1:5000/stacks/app:v1", "sha256:b")); got != "" {
		t.Fatalf("a push older than pushSettle awaits %s", got)
	}
	var none *pushes
	if none.awaited(st("oci://127.0.0.1:5000/stacks/app:v1", "sha256:a")) != "" {
		t.Fatal("no receiver, yet awaited")
	}
}

// testReceiver is a receiver over a fake cluster holding the token
// Secret, a Stack and a Pipeline of 127.0.0.1:5000/stacks/app and a Stack
// of another repository.
func testReceiver(t *testing.T, token string, elected bool, log *bytes.Buffer) *receiver {
	t.Helper()
	s, err := ctl.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	objs := []client.Object{
		&v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tagged"}, Spec: v1alpha1.StackSpec{Source: "oci://127.0.0.1:5000/stacks/app:v1"}},
		&v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other"}, Spec: v1alpha1.StackSpec{Source: "oci://127.0.0.1:5000/stacks/other:v1"}},
		&v1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app"}, Spec: v1alpha1.PipelineSpec{Source: "oci://127.0.0.1:5000/stacks/app"}},
	}
	if token != "" {
		objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "convoy-system", Name: "webhook"}, Data: map[string][]byte{"token": []byte(token + "\n")}})
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithIndex(&v1alpha1.Stack{}, sourceRepositoryIndex, func(o client.Object) []string { return []string{stackRepositoryKey(o.(*v1alpha1.Stack))} }).
		WithIndex(&v1alpha1.Pipeline{}, sourceRepositoryIndex, func(o client.Object) []string { return []string{pipelineRepositoryKey(o.(*v1alpha1.Pipeline))} }).
		Build()
	ch := make(chan struct{})
	if elected {
		close(ch)
	}
	logger := logr.Discard()
	if log != nil {
		logger = funcr.New(func(prefix, args string) { log.WriteString(prefix + " " + args + "\n") }, funcr.Options{})
	}
	return &receiver{
		secret: types.NamespacedName{Namespace: "convoy-system", Name: "webhook"}, meta: c, reader: c, elected: ch, list: c,
		stackCh: make(chan event.GenericEvent, 8), pipelineCh: make(chan event.GenericEvent, 8), pushes: newPushes(),
		log: logger, receipts: func(string) {},
	}
}

func post(r *receiver, auth, contentType, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, WebhookPath, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	return w
}

const v2Type = "application/vnd.docker.distribution.events.v2+json"

// Only the Secret's token is accepted; every refusal is a 401 that
// names why, and neither the reply nor the log holds a token.
func TestReceiverAuthorization(t *testing.T) {
	const token = "s3cret-token-of-the-test"
	var log bytes.Buffer
	r := testReceiver(t, token, true, &log)
	for _, tt := range []struct{ name, auth, want string }{
		{"no header", "", "no Authorization header"},
		{"basic", "Basic dXNlcjpwYXNz", "not Bearer TOKEN"},
		{"empty bearer", "Bearer ", "not Bearer TOKEN"},
		{"wrong token", "Bearer not-the-" + token, "wrong token"},
		{"prefix of the token", "Bearer " + token[:10], "wrong token"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := post(r, tt.auth, v2Type, pushEnvelope)
			if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), tt.want) {
				t.Fatalf("%d %q, want 401 %q", w.Code, w.Body.String(), tt.want)
			}
			if len(r.stackCh)+len(r.pipelineCh) != 0 {
				t.Fatal("a refused notification reconciled something")
			}
		})
	}
	if strings.Contains(log.String(), token[:10]) || !strings.Contains(log.String(), "refused a registry notification") {
		t.Fatalf("the log holds the token, or no refusal:\n%s", log.String())
	}
	w := post(r, "bearer "+token, v2Type, pushEnvelope)
	if w.Code != http.StatusAccepted || !strings.Contains(w.Body.String(), "reconciling 1 Stacks and 1 Pipelines") {
		t.Fatalf("the right token: %d %q", w.Code, w.Body.String())
	}
	if got := (<-r.stackCh).Object.GetName(); got != "tagged" || len(r.stackCh) != 0 {
		t.Fatalf("reconciled Stack %s (and %d more), want tagged only", got, len(r.stackCh))
	}
	if got := (<-r.pipelineCh).Object.GetName(); got != "app" {
		t.Fatalf("reconciled Pipeline %s", got)
	}
	if _, ok := r.pushes.pipeline(types.NamespacedName{Namespace: "ns", Name: "app"}); !ok {
		t.Fatal("the Pipeline is not marked to list its tags again")
	}
}

// Without the Secret, or with no token in it, nothing is accepted; the
// caller, not authenticated, is not told which Secret nor why: the log is.
func TestReceiverWithoutToken(t *testing.T) {
	for _, tt := range []struct{ token, why string }{
		{"", "v1 Secret convoy-system/webhook (--webhook-token-secret) not found"},
		{" ", "has no key token"},
	} {
		r := testReceiver(t, tt.token, true, nil)
		w := post(r, "Bearer anything", v2Type, pushEnvelope)
		if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "no usable token") ||
			strings.Contains(w.Body.String(), "convoy-system") || strings.Contains(w.Body.String(), "webhook") {
			t.Fatalf("%d %q", w.Code, w.Body.String())
		}
		req := httptest.NewRequest(http.MethodPost, WebhookPath, strings.NewReader(pushEnvelope))
		req.Header.Set("Authorization", "Bearer anything")
		req.Header.Set("Content-Type", v2Type)
		if rep := r.serve(req); !strings.Contains(rep.detail, tt.why) {
			t.Fatalf("what the log says: %q, want %q", rep.detail, tt.why)
		}
	}
}

// What is not a notification is refused with a reason; a replica that
// does not lead answers 503 (the registry sends again).
func TestReceiverRequests(t *testing.T) {
	const token = "tok"
	r := testReceiver(t, token, true, nil)
	big := `{"events":[` + strings.Repeat(pushEvent("r:5000", "a", "v1")+",", maxWebhookBody/80) + pushEvent("r:5000", "a", "v1") + `]}`
	for _, tt := range []struct {
		name, contentType, body string
		code                    int
		want                    string
	}{
		{"v1 envelope", "application/vnd.docker.distribution.events.v1+json", pushEnvelope, http.StatusAccepted, "reconciling 1 Stacks"},
		{"no content type", "", pushEnvelope, http.StatusAccepted, "reconciling 1 Stacks"},
		{"text", "text/plain", pushEnvelope, http.StatusUnsupportedMediaType, `content type "text/plain"`},
		{"bad JSON", v2Type, `{"events": [`, http.StatusBadRequest, "the body is not a registry notification"},
		{"too large", v2Type, big, http.StatusRequestEntityTooLarge, "larger than 1048576 bytes"},
		{"pull only", v2Type, strings.Replace(pushEnvelope, `"push"`, `"pull"`, 1), http.StatusAccepted, "no push of a manifest among 1 events"},
		{"unknown repository", v2Type, `{"events":[` + pushEvent("r:5000", "a", "v1") + `]}`, http.StatusAccepted, "pushed r:5000/a: reconciling 0 Stacks and 0 Pipelines"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := post(r, "Bearer "+token, tt.contentType, tt.body)
			if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.want) {
				t.Fatalf("%d %q, want %d %q", w.Code, w.Body.String(), tt.code, tt.want)
			}
			for len(r.stackCh) > 0 {
				<-r.stackCh
			}
			for len(r.pipelineCh) > 0 {
				<-r.pipelineCh
			}
		})
	}
	req := httptest.NewRequest(http.MethodGet, WebhookPath, nil)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	if w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", w.Code)
	}
	follower := testReceiver(t, token, false, nil)
	if w := post(follower, "Bearer "+token, v2Type, pushEnvelope); w.Code != http.StatusServiceUnavailable || len(follower.stackCh) != 0 {
		t.Fatalf("not leading: %d %q", w.Code, w.Body.String())
	}
}

// A changed Secret's token replaces the old one at once: the cache's
// resourceVersion of the Secret moved.
func TestReceiverReadsTheChangedToken(t *testing.T) {
	r := testReceiver(t, "old", true, nil)
	if w := post(r, "Bearer old", v2Type, pushEnvelope); w.Code != http.StatusAccepted {
		t.Fatalf("old token: %d %q", w.Code, w.Body.String())
	}
	var s corev1.Secret
	key := types.NamespacedName{Namespace: "convoy-system", Name: "webhook"}
	ctx := context.Background()
	if err := r.reader.Get(ctx, key, &s); err != nil {
		t.Fatal(err)
	}
	s.Data["token"] = []byte("new")
	if err := r.reader.(client.Client).Update(ctx, &s); err != nil {
		t.Fatal(err)
	}
	if w := post(r, "Bearer old", v2Type, pushEnvelope); w.Code != http.StatusUnauthorized {
		t.Fatalf("old token after the change: %d %q", w.Code, w.Body.String())
	}
	if w := post(r, "Bearer new", v2Type, pushEnvelope); w.Code != http.StatusAccepted {
		t.Fatalf("new token: %d %q", w.Code, w.Body.String())
	}
}

// The receiver's flags come together, or not at all.
func TestWebhookFlags(t *testing.T) {
	for _, tt := range []struct {
		listen, secret, err string
	}{
		{"", "", ""},
		{":9292", "convoy-system/convoy-webhook", ""},
		{":9292", "", "--webhook-listen needs --webhook-token-secret NAMESPACE/NAME"},
		{"", "convoy-system/convoy-webhook", "--webhook-token-secret needs --webhook-listen ADDR"},
		{":9292", "convoy-webhook", `--webhook-token-secret "convoy-webhook": want NAMESPACE/NAME`},
	} {
		_, err := Options{WebhookListen: tt.listen, WebhookTokenSecret: tt.secret}.webhookSecret()
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%q %q: %v, want %q", tt.listen, tt.secret, err, tt.err)
		}
	}
}
