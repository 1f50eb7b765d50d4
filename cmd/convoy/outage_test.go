package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"k8s.io/client-go/rest"
)

// outageProxy is an HTTP proxy to the API server (its own admin
// credentials) that goes down when it reads the first server-side apply
// (not a dry run) into namespace ns: that request's connection and every
// other is closed unanswered, and its address refuses connections, as an
// API server restarting does; after down it listens on the same address
// again. The write is certain to fall inside the outage.
type outageProxy struct {
	srv  *http.Server
	addr string
	ns   string
	down time.Duration

	mu         sync.Mutex
	ln         net.Listener
	conns      map[net.Conn]struct{}
	began, end time.Time
	err        error // listening again failed
}

func startOutageProxy(t *testing.T, cfg *rest.Config, ns string, down time.Duration) *outageProxy {
	t.Helper()
	rp := adminProxy(t, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &outageProxy{addr: ln.Addr().String(), ns: ns, down: down, ln: ln, conns: map[net.Conn]struct{}{}}
	p.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p.gate(r) {
				if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
					_ = conn.Close()
				}
				return
			}
			rp.ServeHTTP(w, r)
		}),
		ConnState: func(c net.Conn, s http.ConnState) {
			p.mu.Lock()
			defer p.mu.Unlock()
			switch s {
			case http.StateNew:
				p.conns[c] = struct{}{}
			case http.StateClosed, http.StateHijacked:
				delete(p.conns, c)
			}
		},
	}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() { _ = p.srv.Close() })
	return p
}

// gate starts the outage at the first server-side apply into the
// namespace: it closes the listener and every other connection; the
// caller closes the request's own.
func (p *outageProxy) gate(r *http.Request) bool {
	if r.Method != http.MethodPatch || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/apply-patch") ||
		r.URL.Query().Has("dryRun") || !strings.Contains(r.URL.Path, "/namespaces/"+p.ns+"/") {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.began.IsZero() {
		return false
	}
	p.began = time.Now()
	_ = p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	time.AfterFunc(p.down, p.listenAgain)
	return true
}

func (p *outageProxy) listenAgain() {
	ln, err := net.Listen("tcp", p.addr)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.end, p.err = time.Now(), err
	if err == nil {
		p.ln = ln
		go func() {
			_ = p.srv.Serve(ln)
			_ = ln.Close() // the test ended first
		}()
	}
}

// outage is when it began and ended (zero: not yet).
func (p *outageProxy) outage() (began, end time.Time, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.began, p.end, p.err
}

// A release's write that falls inside a 10 s API server outage (its
// connection closed under it, then every connection refused) is sent again
// until the server answers, within --unreachable-timeout (30 s): the apply
// succeeds, one revision, deployed (issue 54: it gave up after 4 retries
// over 3.75 s).
func TestWriteInsideAnOutageIsRetried(t *testing.T) {
	ns := cluster.Namespace(t)
	proxy := startOutageProxy(t, cluster.RESTConfig(), ns, 10*time.Second)
	kc := kubeconfigVia(t, "http://"+proxy.addr)
	dropKubeconfigAuth(t, kc)
	stack := "outage-" + ns
	dropLock(t, stack)
	dir := writeStack(t, fmt.Sprintf("stack %q {\n  default_namespace = %q\n}\nrelease \"web\" {\n  chart   = %q\n  values  = [{ ready = true }]\n  timeout = \"2m\"\n}\n", stack, ns, neverReadyChart(t)))

	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress")
	began, end, err := proxy.outage()
	if began.IsZero() {
		t.Fatalf("no server-side apply into %s went through the proxy:\n%s\n%s", ns, out, errOut)
	}
	if err != nil {
		t.Fatalf("the proxy could not listen again after the outage: %v", err)
	}
	if end.IsZero() {
		t.Fatalf("the apply ended (exit %d) inside the outage:\n%s\n%s", code, out, errOut)
	}
	if code != 0 {
		t.Fatalf("exit %d after a 10 s outage under a write:\n%s\n%s", code, out, errOut)
	}
	eng, err := release.NewEngine(context.Background(), cluster.RESTConfig(), release.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := eng.Storage(ns).History(context.Background(), "web")
	if err != nil || len(h) != 1 || h[0].Info.Status != release.StatusDeployed {
		t.Fatalf("history of web: %d records (%v), want revision 1 deployed", len(h), err)
	}
	t.Logf("the outage began under a server-side apply and lasted %s; the apply:\n%s", end.Sub(began).Round(100*time.Millisecond), out)
}
