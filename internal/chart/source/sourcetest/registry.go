package sourcetest

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster"
	"golang.org/x/crypto/bcrypt"
)

// Registry is a distribution registry on a free loopback port with a
// temporary storage directory, stopped when the test ends. Clients should
// use Host (a counting proxy in front of it); pushes go to the registry
// directly.
type Registry struct {
	// Direct is the registry's own host:port.
	Direct string
	// Host is the counting proxy's host:port.
	Host     string
	Username string
	Password string
	// CAFile is the certificate of a TLS registry (self-signed).
	CAFile   string
	scheme   string
	requests atomic.Int64

	mu  sync.Mutex
	log []served
}

// served is a request the proxy served and the status it answered.
type served struct {
	method, path string
	status       int
}

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// StartRegistry starts the registry; with a username it requires htpasswd
// basic auth.
func StartRegistry(t testing.TB, username, password string) *Registry {
	t.Helper()
	return StartRegistryWith(t, RegistryOptions{Username: username, Password: password})
}

// RegistryOptions configure StartRegistryWith.
type RegistryOptions struct {
	// Username and Password, if set, require htpasswd basic auth.
	Username, Password string
	// TLSCert and TLSKey, if set, make the registry serve HTTPS with them.
	// There is no counting proxy then: Host is Direct and Requests is 0.
	TLSCert, TLSKey string
	// Notify, if set, is a notifications endpoint: the registry POSTs its
	// events (pulls ignored) there.
	Notify *NotifyEndpoint
}

// NotifyEndpoint is an endpoint of the registry's notifications.
type NotifyEndpoint struct {
	URL string
	// Authorization is the header's value sent with each notification
	// ("": none).
	Authorization string
}

// notificationsConf is the registry configuration's notifications
// section: one endpoint, retried a second apart.
func notificationsConf(n *NotifyEndpoint) string {
	if n == nil {
		return ""
	}
	headers := ""
	if n.Authorization != "" {
		headers = fmt.Sprintf("      headers:\n        Authorization: [%q]\n", n.Authorization)
	}
	return fmt.Sprintf(`notifications:
  endpoints:
    - name: convoy
      url: %q
%s      timeout: 5s
      threshold: 1
      backoff: 1s
      ignore:
        actions: [pull]
`, n.URL, headers)
}

// StartRegistryWith starts the registry as opts say.
func StartRegistryWith(t testing.TB, opts RegistryOptions) *Registry {
	t.Helper()
	skipShort(t, "the OCI registry")
	username, password := opts.Username, opts.Password
	bin, err := devcluster.LocateRegistry(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	port := freePort(t)
	authConf := ""
	if username != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		htpasswd := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(username+":"+string(hash)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		authConf = fmt.Sprintf("auth:\n  htpasswd:\n    realm: convoy-test\n    path: %s\n", htpasswd)
	}
	tlsConf := ""
	scheme := "http"
	if opts.TLSCert != "" {
		tlsConf = fmt.Sprintf("  tls:\n    certificate: %s\n    key: %s\n", opts.TLSCert, opts.TLSKey)
		scheme = "https"
	}
	conf := fmt.Sprintf(`version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: 127.0.0.1:%d
  secret: convoy-test-secret
%s%s%s`, filepath.Join(dir, "storage"), port, tlsConf, authConf, notificationsConf(opts.Notify))
	confPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", confPath)
	logf, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start registry: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	r := &Registry{Direct: fmt.Sprintf("127.0.0.1:%d", port), Username: username, Password: password, scheme: scheme}
	probe := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // readiness only
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := probe.Get(scheme + "://" + r.Direct + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized {
				break
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "registry.log"))
			t.Fatalf("registry on %s never became ready: %v\n%s", r.Direct, err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if opts.TLSCert != "" {
		r.Host = r.Direct
		r.CAFile = opts.TLSCert
		return r
	}
	target, _ := url.Parse("http://" + r.Direct)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		sw := &statusWriter{ResponseWriter: w}
		proxy.ServeHTTP(sw, req)
		r.mu.Lock()
		r.log = append(r.log, served{req.Method, req.URL.Path, sw.status})
		r.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	r.Host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

// Requests is the number of requests the proxy has served.
func (r *Registry) Requests() int64 { return r.requests.Load() }

// Count counts the requests with method whose path contains part that
// the proxy answered with a success (2xx or 3xx): GET "/blobs/sha256:…"
// counts the downloads of one blob, not the authentication challenges
// before them.
func (r *Registry) Count(method, part string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.log {
		if q.method == method && strings.Contains(q.path, part) && q.status < 400 {
			n++
		}
	}
	return n
}

// Push pushes a chart archive with `helm push` under oci://<Direct>/<path>
// and returns the manifest digest helm reports.
func (r *Registry) Push(t testing.TB, archive, path string) string {
	t.Helper()
	home := t.TempDir()
	args := []string{"push", archive, "oci://" + r.Direct + "/" + path}
	if r.CAFile != "" {
		args = append(args, "--ca-file", r.CAFile)
	} else {
		args = append(args, "--plain-http")
	}
	if r.Username != "" {
		args = append(args, "--username", r.Username, "--password", r.Password)
	}
	out := Helm(t, home, args...)
	// helm prints "Pushed: …" and "Digest: sha256:…" (on stdout or stderr
	// depending on the version); read the manifest digest from the registry
	// instead of parsing either.
	return r.ManifestDigest(t, path+"/"+chartNameOf(archive), versionOf(archive), out)
}

// ManifestDigest asks the registry for the digest of a tag.
func (r *Registry) ManifestDigest(t testing.TB, repo, tag, context string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodHead, r.scheme+"://"+r.Direct+"/v2/"+repo+"/manifests/"+strings.ReplaceAll(tag, "+", "_"), nil)
	req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
	if r.Username != "" {
		req.SetBasicAuth(r.Username, r.Password)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // a test's own registry
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	d := resp.Header.Get("Docker-Content-Digest")
	if resp.StatusCode != http.StatusOK || d == "" {
		t.Fatalf("manifest %s:%s: %s (push said %q)", repo, tag, resp.Status, context)
	}
	return d
}

// chartNameOf and versionOf split "<dir>/name-1.2.3.tgz".
func chartNameOf(archive string) string {
	base := strings.TrimSuffix(filepath.Base(archive), ".tgz")
	i := strings.LastIndex(base, "-")
	for i > 0 && !(base[i+1] >= '0' && base[i+1] <= '9') {
		i = strings.LastIndex(base[:i], "-")
	}
	return base[:i]
}

func versionOf(archive string) string {
	base := strings.TrimSuffix(filepath.Base(archive), ".tgz")
	return strings.TrimPrefix(base, chartNameOf(archive)+"-")
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Tag gives the manifest of repo:from a second tag, to (such as latest),
// as `oras tag` does: the manifest fetched and put back under the new tag.
func (r *Registry) Tag(t testing.TB, repo, from, to string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // a test's own registry
	base := r.scheme + "://" + r.Direct + "/v2/" + repo + "/manifests/"
	get, _ := http.NewRequest(http.MethodGet, base+from, nil)
	get.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
	put, _ := http.NewRequest(http.MethodPut, base+to, nil)
	if r.Username != "" {
		get.SetBasicAuth(r.Username, r.Password)
		put.SetBasicAuth(r.Username, r.Password)
	}
	resp, err := client.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("manifest %s:%s: %s %v", repo, from, resp.Status, err)
	}
	put.Body = io.NopCloser(bytes.NewReader(body))
	put.ContentLength = int64(len(body))
	put.Header.Set("Content-Type", resp.Header.Get("Content-Type"))
	resp, err = client.Do(put)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("tag %s:%s as %s: %s", repo, from, to, resp.Status)
	}
}
