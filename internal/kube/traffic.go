package kube

import (
	"io"
	"net/http"
	"strings"
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
	// RateLimitWait is the time requests waited on the clients' own rate
	// limiters (--kube-qps, --kube-burst), in nanoseconds, summed over
	// concurrent requests: ClusterOptions pass it to the clients
	// (Options.RateLimitWait).
	RateLimitWait atomic.Int64
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
