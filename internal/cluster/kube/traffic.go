package kube

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/rest"
)

// Traffic counts the requests that clients built from a configuration it
// wrapped send, and the response bytes they read (convoy plan --stats).
// Safe for concurrent use.
type Traffic struct {
	Requests atomic.Int64
	Bytes    atomic.Int64
	// ByVerb counts requests by HTTP method.
	Get, List, Patch, Other atomic.Int64
	// Discovery counts, among Get, the requests for the server's version
	// and its API groups and resources (/version, /api, /apis, a group
	// version's resource list).
	Discovery atomic.Int64
	// OnRequest, if set, is called for each request with its verb: get,
	// list, watch, patch, discovery (a get of discovery), or the HTTP
	// method in lower case (post, put, delete).
	OnRequest func(verb string)
	// RateLimits counts the requests the clients' own rate limiters
	// (--kube-qps, --kube-burst) held back and the delay they imposed,
	// summed over concurrent requests: ClusterOptions pass it to the
	// clients (Options.RateLimits).
	RateLimits RateLimits

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
	verb := "other"
	switch {
	case req.Method == http.MethodGet && req.URL.Query().Has("watch"):
		c.t.Other.Add(1)
		verb = "watch"
	case req.Method == http.MethodGet && isList(req.URL.Path):
		c.t.List.Add(1)
		verb = "list"
	case req.Method == http.MethodGet:
		c.t.Get.Add(1)
		verb = "get"
		if isDiscovery(req.URL.Path) {
			c.t.Discovery.Add(1)
			verb = "discovery"
		}
	case req.Method == http.MethodPatch:
		c.t.Patch.Add(1)
		verb = "patch"
	default:
		c.t.Other.Add(1)
		verb = strings.ToLower(req.Method)
	}
	if c.t.OnRequest != nil {
		c.t.OnRequest(verb)
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

// isDiscovery tells discovery paths (/version, /api, /api/v1, /apis,
// /apis/group, /apis/group/version) from requests for objects.
func isDiscovery(path string) bool {
	switch {
	case path == "/version" || path == "/api" || path == "/apis":
		return true
	case len(path) > 5 && path[:5] == "/api/":
		return after(path[5:], 1) == ""
	case len(path) > 6 && path[:6] == "/apis/":
		return after(path[6:], 2) == ""
	}
	return false
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
