package sourcetest

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// HTTPRepo is a chart repository served from a directory by the test
// process. Its index is made by `helm repo index`.
type HTTPRepo struct {
	Dir    string
	Server *httptest.Server

	mu       sync.Mutex
	requests []string
	// Wrap, if set before requests arrive, handles requests instead of the
	// file server (auth checks, hostile answers); next serves the files.
	wrap func(w http.ResponseWriter, r *http.Request, next http.Handler)
}

// NewHTTPRepo starts a plain HTTP repository (tls: an HTTPS one with
// httptest's certificate) serving an empty directory.
func NewHTTPRepo(t testing.TB, tls bool) *HTTPRepo {
	t.Helper()
	if tls {
		return NewHTTPSRepo(t, nil)
	}
	return newHTTPRepo(t, false, nil)
}

// NewHTTPSRepo starts an HTTPS repository; configure (if not nil) adjusts
// its TLS settings (client certificates) before it starts.
func NewHTTPSRepo(t testing.TB, configure func(*tls.Config)) *HTTPRepo {
	t.Helper()
	return newHTTPRepo(t, true, configure)
}

func newHTTPRepo(t testing.TB, useTLS bool, configure func(*tls.Config)) *HTTPRepo {
	t.Helper()
	r := &HTTPRepo{Dir: t.TempDir()}
	files := http.FileServer(http.Dir(r.Dir))
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, req.Method+" "+req.URL.Path)
		wrap := r.wrap
		r.mu.Unlock()
		if wrap != nil {
			wrap(w, req, files)
			return
		}
		files.ServeHTTP(w, req)
	})
	if useTLS {
		r.Server = httptest.NewUnstartedServer(h)
		r.Server.TLS = &tls.Config{}
		if configure != nil {
			configure(r.Server.TLS)
		}
		r.Server.StartTLS()
	} else {
		r.Server = httptest.NewServer(h)
	}
	t.Cleanup(r.Server.Close)
	return r
}

// URL is the repository URL.
func (r *HTTPRepo) URL() string { return r.Server.URL }

// Wrap installs a handler in front of the files.
func (r *HTTPRepo) Wrap(f func(w http.ResponseWriter, r *http.Request, next http.Handler)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wrap = f
}

// Publish packages name at each version into the repository and
// regenerates the index with `helm repo index`.
func (r *HTTPRepo) Publish(t testing.TB, name string, versions ...string) {
	t.Helper()
	for _, v := range versions {
		Package(t, r.Dir, name, v)
	}
	r.Index(t)
}

// Index regenerates index.yaml.
func (r *HTTPRepo) Index(t testing.TB) {
	t.Helper()
	Helm(t, t.TempDir(), "repo", "index", r.Dir, "--url", r.URL())
}

// Requests returns the requests served so far ("GET /index.yaml").
func (r *HTTPRepo) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

// Count counts the requests served whose path ends with suffix.
func (r *HTTPRepo) Count(suffix string) int {
	n := 0
	for _, q := range r.Requests() {
		if strings.HasSuffix(q, suffix) {
			n++
		}
	}
	return n
}
