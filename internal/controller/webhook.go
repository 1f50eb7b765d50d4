package controller

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"oras.land/oras-go/v2/registry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// The push receiver (--webhook-listen): a registry's notifications of
// pushes reconcile at once the Stacks and Pipelines whose source names the
// pushed repository, instead of at their next interval.

// WebhookPath is where the receiver takes a registry's notifications.
const WebhookPath = "/registry"

// webhookTokenKey is the key of the token in --webhook-token-secret.
const webhookTokenKey = "token"

// maxWebhookBody bounds a notification's body: distribution sends one
// event per request (about a kilobyte; more with includereferences).
const maxWebhookBody = 1 << 20

// tokenRecheck is how long a token read without the Secret's metadata in
// the cache (another namespace than --namespace) is used before it is
// read again.
const tokenRecheck = 10 * time.Second

// Media types of distribution's notification envelope: v2 since
// distribution v3, v1 before.
var webhookMediaTypes = []string{
	"application/vnd.docker.distribution.events.v2+json",
	"application/vnd.docker.distribution.events.v1+json",
	"application/json",
}

// Results of a notification, the receipts metric's label.
const (
	receiptAccepted     = "accepted"     // pushes that reconcile Stacks or Pipelines
	receiptUnmatched    = "unmatched"    // pushes of repositories no source names
	receiptIgnored      = "ignored"      // no push (pulls, deletes, …)
	receiptUnauthorized = "unauthorized" // 401
	receiptInvalid      = "invalid"      // 400, 405, 413, 415
	receiptUnavailable  = "unavailable"  // 503: not the leader, or the token unreadable
)

// registryEnvelope is distribution's notification body (the fields the
// receiver reads).
type registryEnvelope struct {
	Events []registryEvent `json:"events"`
}

type registryEvent struct {
	ID     string `json:"id"`
	Action string `json:"action"`
	Target struct {
		MediaType  string `json:"mediaType"`
		Digest     string `json:"digest"`
		Repository string `json:"repository"`
		Tag        string `json:"tag"`
	} `json:"target"`
	Request struct {
		Host string `json:"host"`
	} `json:"request"`
}

// isManifestPush says whether the event is the push of a manifest (by tag
// or by digest): what can change what a tag or a Pipeline resolves to.
// The pushes of blobs before it change nothing yet.
func (e registryEvent) isManifestPush() bool {
	if e.Action != "push" {
		return false
	}
	mt := e.Target.MediaType
	return e.Target.Tag != "" || strings.Contains(mt, "manifest") || strings.Contains(mt, "index")
}

// repositoryKey identifies a repository as the controller reaches it:
// the registry's host (docker.io is registry-1.docker.io, as the client
// connects) in lower case, and the path.
func repositoryKey(hostPath string) (string, error) {
	ref, err := registry.ParseReference(hostPath)
	if err != nil {
		return "", err
	}
	return strings.ToLower(ref.Host()) + "/" + ref.Repository, nil
}

// stackRepositoryKey is the repository a Stack's spec.source names ("":
// none, or not a reference).
func stackRepositoryKey(st *v1alpha1.Stack) string {
	ref, err := artifact.ParseRef(st.Spec.Source)
	if err != nil {
		return ""
	}
	k, _ := repositoryKey(ref.Repository)
	return k
}

// pipelineRepositoryKey is the repository a Pipeline follows.
func pipelineRepositoryKey(p *v1alpha1.Pipeline) string {
	ref, err := artifact.ParseRepository(p.Spec.Source)
	if err != nil {
		return ""
	}
	k, _ := repositoryKey(ref.Repository)
	return k
}

// sourceRepositoryIndex indexes Stacks and Pipelines in the cache by the
// repository of their source (repositoryKey).
const sourceRepositoryIndex = "convoy.dev/source-repository"

// receiver serves WebhookPath on every replica; only the leader, whose
// controllers run, accepts (the others answer 503, and the registry sends
// again).
type receiver struct {
	listener net.Listener
	// secret holds the bearer token (key token).
	secret types.NamespacedName
	// meta reads the Secret's metadata from the cache (no request);
	// reader reads the Secret itself from the API server.
	meta, reader client.Reader
	// elected is closed once this replica leads its shard.
	elected <-chan struct{}
	// list reads Stacks and Pipelines from the cache; the channels feed
	// the Stack and Pipeline controllers.
	list                client.Reader
	stackCh, pipelineCh chan event.GenericEvent
	pushes              *pushes
	log                 logr.Logger
	receipts            func(result string)

	mu       sync.Mutex
	tokenRV  string
	token    []byte
	tokenAt  time.Time
	tokenErr error
}

// Timeouts of the receiver's server, and of handing a push to the
// controllers.
const (
	webhookReadTimeout    = 30 * time.Second
	webhookShutdownGrace  = 5 * time.Second
	webhookEnqueueTimeout = 10 * time.Second
)

// Start serves until ctx ends (a manager.Runnable).
func (r *receiver) Start(ctx context.Context) error {
	srv := &http.Server{
		Handler:           r,
		ReadHeaderTimeout: webhookReadTimeout,
		ReadTimeout:       webhookReadTimeout,
		WriteTimeout:      webhookReadTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(r.listener) }()
	select {
	case err := <-errc:
		return fmt.Errorf("--webhook-listen: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), webhookShutdownGrace)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}

// NeedLeaderElection: every replica listens (and says whether it leads).
func (r *receiver) NeedLeaderElection() bool { return false }

// webhookReply is the receiver's answer, a line of text.
type webhookReply struct {
	code   int
	result string
	msg    string
	// detail is logged, never sent: what the caller, who may not have
	// authenticated, is not told (the token Secret's name, why it cannot
	// be read).
	detail string
}

func reply(code int, result, msg string) webhookReply {
	return webhookReply{code: code, result: result, msg: msg}
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rep := r.serve(req)
	r.receipts(rep.result)
	// Never the request's headers: the token is one of them.
	switch {
	case rep.code >= 400:
		r.log.Info("refused a registry notification", "remote", req.RemoteAddr, "status", rep.code, "reason", strings.TrimSpace(rep.msg+" "+rep.detail))
	case rep.result == receiptAccepted:
		r.log.Info("registry notification", "remote", req.RemoteAddr, "detail", rep.msg)
	default:
		// Blob pushes, pulls, repositories no source names: many.
		r.log.V(1).Info("registry notification", "remote", req.RemoteAddr, "result", rep.result, "detail", rep.msg)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if rep.code == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", http.MethodPost)
	}
	w.WriteHeader(rep.code)
	fmt.Fprintln(w, rep.msg)
}

func (r *receiver) serve(req *http.Request) webhookReply {
	if req.URL.Path != WebhookPath {
		return reply(http.StatusNotFound, receiptInvalid, "not found: registry notifications go to POST "+WebhookPath)
	}
	if req.Method != http.MethodPost {
		return reply(http.StatusMethodNotAllowed, receiptInvalid, "method "+req.Method+": registry notifications are POSTed")
	}
	if rep, ok := r.authorize(req); !ok {
		return rep
	}
	select {
	case <-r.elected:
	default:
		return reply(http.StatusServiceUnavailable, receiptUnavailable, "this replica does not lead its shard: send again (the registry retries)")
	}
	if ct := req.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !isWebhookMediaType(mt) {
			return reply(http.StatusUnsupportedMediaType, receiptInvalid, fmt.Sprintf("content type %q: want %s", ct, webhookMediaTypes[0]))
		}
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxWebhookBody+1))
	if err != nil {
		return reply(http.StatusBadRequest, receiptInvalid, "reading the body: "+err.Error())
	}
	if len(body) > maxWebhookBody {
		return reply(http.StatusRequestEntityTooLarge, receiptInvalid, fmt.Sprintf("the body is larger than %d bytes", maxWebhookBody))
	}
	pushed, ignored, err := manifestPushes(body)
	if err != nil {
		return reply(http.StatusBadRequest, receiptInvalid, err.Error())
	}
	repos := repositoriesOf(pushed)
	if len(repos) == 0 {
		return reply(http.StatusAccepted, receiptIgnored, fmt.Sprintf("no push of a manifest among %d events: nothing to reconcile", ignored))
	}
	ctx, cancel := context.WithTimeout(req.Context(), webhookEnqueueTimeout)
	defer cancel()
	stacks, pipelines, err := r.enqueue(ctx, pushed)
	if err != nil {
		return reply(http.StatusServiceUnavailable, receiptUnavailable, err.Error())
	}
	msg := fmt.Sprintf("pushed %s: reconciling %d Stacks and %d Pipelines", strings.Join(repos, ", "), stacks, pipelines)
	if stacks+pipelines == 0 {
		return reply(http.StatusAccepted, receiptUnmatched, msg)
	}
	return reply(http.StatusAccepted, receiptAccepted, msg)
}

func isWebhookMediaType(mt string) bool {
	for _, want := range webhookMediaTypes {
		if strings.EqualFold(mt, want) {
			return true
		}
	}
	return false
}

// manifestPush is a push of a manifest to a repository (repositoryKey),
// by tag or by digest.
type manifestPush struct {
	repo, tag, digest string
}

// manifestPushes are the envelope's manifest pushes, in order; ignored
// counts the other events.
func manifestPushes(body []byte) (pushes []manifestPush, ignored int, err error) {
	var env registryEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, 0, fmt.Errorf("the body is not a registry notification ({\"events\": [...]}): %v", err)
	}
	if env.Events == nil {
		return nil, 0, errors.New(`the body is not a registry notification: no "events" list`)
	}
	for i, e := range env.Events {
		if !e.isManifestPush() {
			ignored++
			continue
		}
		if e.Target.Repository == "" {
			return nil, 0, fmt.Errorf("events[%d] (push): target.repository is empty", i)
		}
		if e.Request.Host == "" {
			return nil, 0, fmt.Errorf("events[%d] (push of %s): request.host is empty: the registry's host is needed to match Stacks' sources", i, e.Target.Repository)
		}
		k, err := repositoryKey(e.Request.Host + "/" + e.Target.Repository)
		if err != nil {
			return nil, 0, fmt.Errorf("events[%d] (push): %s/%s is not a repository: %v", i, e.Request.Host, e.Target.Repository, err)
		}
		pushes = append(pushes, manifestPush{repo: k, tag: e.Target.Tag, digest: e.Target.Digest})
	}
	return pushes, ignored, nil
}

// repositoriesOf are the repositories pushed to, each once, in order.
func repositoriesOf(pushes []manifestPush) []string {
	var out []string
	for _, p := range pushes {
		if !slices.Contains(out, p.repo) {
			out = append(out, p.repo)
		}
	}
	return out
}

// authorize checks the bearer token against the Secret's.
func (r *receiver) authorize(req *http.Request) (webhookReply, bool) {
	unauthorized := func(why string) (webhookReply, bool) {
		return reply(http.StatusUnauthorized, receiptUnauthorized, "unauthorized: "+why), false
	}
	h := req.Header.Get("Authorization")
	if h == "" {
		return unauthorized("no Authorization header (want Bearer TOKEN)")
	}
	scheme, got, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(got) == "" {
		return unauthorized("the Authorization header is not Bearer TOKEN")
	}
	want, err := r.tokenOf(req.Context())
	if err != nil {
		// The caller is not told which Secret, nor why: the log says.
		var ue *tokenUnusableError
		if errors.As(err, &ue) {
			rep, ok := unauthorized("the receiver has no usable token (the controller's log says why)")
			rep.detail = "(" + err.Error() + ")"
			return rep, ok
		}
		return webhookReply{code: http.StatusServiceUnavailable, result: receiptUnavailable, msg: "the token cannot be read now (the controller's log says why)", detail: "(" + err.Error() + ")"}, false
	}
	// Compared as hashes: in constant time, whatever the lengths.
	a, b := sha256.Sum256([]byte(strings.TrimSpace(got))), sha256.Sum256(want)
	if subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
		return unauthorized("wrong token")
	}
	return webhookReply{}, true
}

// tokenUnusableError: the Secret is missing or holds no token; every
// request is refused until it does.
type tokenUnusableError struct{ msg string }

func (e *tokenUnusableError) Error() string { return e.msg }

// tokenOf is the Secret's token, read again when the Secret changes (its
// resourceVersion in the cache moved) or, when the cache does not hold
// it, at most tokenRecheck apart.
func (r *receiver) tokenOf(ctx context.Context) ([]byte, error) {
	rv := ""
	var m metav1.PartialObjectMetadata
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := r.meta.Get(ctx, r.secret, &m); err == nil {
		rv = m.ResourceVersion
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fresh := !r.tokenAt.IsZero() && (rv != "" && rv == r.tokenRV || rv == "" && time.Since(r.tokenAt) < tokenRecheck)
	if fresh {
		return r.token, r.tokenErr
	}
	var s corev1.Secret
	err := r.reader.Get(ctx, r.secret, &s)
	what := fmt.Sprintf("v1 Secret %s (--webhook-token-secret)", r.secret)
	switch {
	case apierrors.IsNotFound(err):
		r.token, r.tokenErr = nil, &tokenUnusableError{what + " not found"}
	case err != nil:
		// Not remembered: the next request reads again.
		return nil, fmt.Errorf("%s: %w", what, err)
	case len(strings.TrimSpace(string(s.Data[webhookTokenKey]))) == 0:
		r.token, r.tokenErr = nil, &tokenUnusableError{fmt.Sprintf("%s has no key %s (or it is empty)", what, webhookTokenKey)}
	default:
		r.token, r.tokenErr = []byte(strings.TrimSpace(string(s.Data[webhookTokenKey]))), nil
	}
	r.tokenRV, r.tokenAt = s.ResourceVersion, time.Now()
	if rv == "" {
		r.tokenRV = ""
	}
	return r.token, r.tokenErr
}

// enqueue reconciles the Stacks and Pipelines whose source names a
// pushed repository; it counts them.
func (r *receiver) enqueue(ctx context.Context, pushed []manifestPush) (stacks, pipelines int, err error) {
	for _, p := range pushed {
		r.pushes.pushedTag(p.repo, p.tag, p.digest)
	}
	for _, repo := range repositoriesOf(pushed) {
		last := pushed[0]
		for _, p := range pushed {
			if p.repo == repo {
				last = p
			}
		}
		var sl v1alpha1.StackList
		if err := r.list.List(ctx, &sl, client.MatchingFields{sourceRepositoryIndex: repo}); err != nil {
			return stacks, pipelines, fmt.Errorf("listing the Stacks of %s: %w", repo, err)
		}
		var pl v1alpha1.PipelineList
		if err := r.list.List(ctx, &pl, client.MatchingFields{sourceRepositoryIndex: repo}); err != nil {
			return stacks, pipelines, fmt.Errorf("listing the Pipelines of %s: %w", repo, err)
		}
		for i := range pl.Items {
			p := &pl.Items[i]
			r.pushes.pushedPipeline(types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, last.tag, last.digest)
			if err := send(ctx, r.pipelineCh, &v1alpha1.Pipeline{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}); err != nil {
				return stacks, pipelines, err
			}
			pipelines++
		}
		for i := range sl.Items {
			st := &sl.Items[i]
			if err := send(ctx, r.stackCh, &v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: st.Namespace, Name: st.Name}}); err != nil {
				return stacks, pipelines, err
			}
			stacks++
		}
	}
	return stacks, pipelines, nil
}

func send(ctx context.Context, ch chan<- event.GenericEvent, obj client.Object) error {
	select {
	case ch <- event.GenericEvent{Object: obj}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the controller did not take %s/%s in time: %w", obj.GetNamespace(), obj.GetName(), ctx.Err())
	}
}
