package kube

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// Traffic counts the requests that clients built from a configuration it
// wrapped send, and the response bytes they read (convoy plan --stats).
// Safe for concurrent use.
type Traffic struct {
	Requests atomic.Int64
	Bytes    atomic.Int64
	// ByVerb counts requests by HTTP method.
	Get, List, Patch, Other atomic.Int64
	// Throttled is the time (nanoseconds, summed over requests) spent
	// waiting on the client-side rate limiters of clients whose
	// Options.Traffic is t (--kube-qps, --kube-burst).
	Throttled atomic.Int64

	mu     sync.Mutex
	byKind map[string]int64 // "verb resource": "create secrets"
}

// ByKind returns how many requests went to each verb and resource, as
// "verb resource=count" pairs in a stable order: "create secrets=1000
// patch deployments=1000". Verbs are Kubernetes' (get, list, watch,
// create, update, patch, delete); resources are the URL's (subresources
// as "pods/log"); discovery requests count as "get discovery".
func (t *Traffic) ByKind() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(t.byKind)) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, t.byKind[k])
	}
	return b.String()
}

func (t *Traffic) count(kind string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byKind == nil {
		t.byKind = map[string]int64{}
	}
	t.byKind[kind]++
}

// limited returns cfg (a copy) with a rate limiter of its own, of cfg's QPS
// and burst, whose waits count into t. Nil t, or no QPS: cfg as is.
func (t *Traffic) limited(cfg *rest.Config) *rest.Config {
	if t == nil || cfg.QPS <= 0 || cfg.RateLimiter != nil {
		return cfg
	}
	cfg = rest.CopyConfig(cfg)
	burst := cfg.Burst
	if burst <= 0 {
		burst = 1
	}
	cfg.RateLimiter = &timedLimiter{RateLimiter: flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, burst), t: t}
	return cfg
}

// timedLimiter counts the time requests wait on a rate limiter.
type timedLimiter struct {
	flowcontrol.RateLimiter
	t *Traffic
}

func (l *timedLimiter) Wait(ctx context.Context) error {
	start := time.Now()
	err := l.RateLimiter.Wait(ctx)
	l.t.Throttled.Add(int64(time.Since(start)))
	return err
}

func (l *timedLimiter) Accept() {
	start := time.Now()
	l.RateLimiter.Accept()
	l.t.Throttled.Add(int64(time.Since(start)))
}

// Wrap makes every client built from cfg count into t.
func (t *Traffic) Wrap(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &counting{next: rt, t: t} })
}

type counting struct {
	next http.RoundTripper
	t    *Traffic
}

func (c *counting) RoundTrip(req *http.Request) (*http.Response, error) {
	c.t.Requests.Add(1)
	switch {
	case req.Method == http.MethodGet && req.URL.Query().Has("watch"):
		c.t.Other.Add(1)
	case req.Method == http.MethodGet && isList(req.URL.Path):
		c.t.List.Add(1)
	case req.Method == http.MethodGet:
		c.t.Get.Add(1)
	case req.Method == http.MethodPatch:
		c.t.Patch.Add(1)
	default:
		c.t.Other.Add(1)
	}
	c.t.count(kindOf(req))
	resp, err := c.next.RoundTrip(req)
	if resp != nil && resp.Body != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.t.Bytes}
	}
	return resp, err
}

// isList tells a collection path (/api/v1/namespaces/ns/pods) from an
// object's (/api/v1/namespaces/ns/pods/name) by the segments after the
// group version: collections have an odd count (resource, or namespaces,
// ns, resource), objects an even one. Discovery paths count as gets.
func isList(path string) bool {
	var rest string
	switch {
	case len(path) > 5 && path[:5] == "/api/":
		rest = path[5:] // v1/...
		rest = after(rest, 1)
	case len(path) > 6 && path[:6] == "/apis/":
		rest = after(path[6:], 2) // group/version/...
	default:
		return false
	}
	if rest == "" {
		return false
	}
	n := 1
	for _, ch := range rest {
		if ch == '/' {
			n++
		}
	}
	return n%2 == 1
}

// kindOf names a request by Kubernetes verb and resource: "create
// secrets", "patch deployments", "get pods/log", "get discovery".
func kindOf(req *http.Request) string {
	p := req.URL.Path
	var rest string
	switch {
	case strings.HasPrefix(p, "/api/"):
		rest = after(p[5:], 1)
	case strings.HasPrefix(p, "/apis/"):
		rest = after(p[6:], 2)
	}
	if rest == "" {
		return strings.ToLower(req.Method) + " discovery"
	}
	segs := strings.Split(rest, "/")
	if segs[0] == "namespaces" && len(segs) >= 3 {
		segs = segs[2:] // namespaces/ns/resource/...
	}
	resource := segs[0]
	if len(segs) >= 3 {
		resource += "/" + segs[2] // resource/name/subresource
	}
	verb := "other"
	switch req.Method {
	case http.MethodGet:
		switch {
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			verb = "watch"
		case len(segs) == 1:
			verb = "list"
		default:
			verb = "get"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
	}
	return verb + " " + resource
}

// after drops the first n segments of p.
func after(p string, n int) string {
	for ; n > 0; n-- {
		i := 0
		for i < len(p) && p[i] != '/' {
			i++
		}
		if i == len(p) {
			return ""
		}
		p = p[i+1:]
	}
	return p
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
