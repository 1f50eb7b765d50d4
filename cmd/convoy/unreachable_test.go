package main

import (
	"context"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"

	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/testfiles"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// tcpProxy forwards TCP connections from 127.0.0.1 to an API server (TLS
// end to end). Cut closes it, listener and connections: from then on the
// API server's address, as the clients know it, refuses connections.
type tcpProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	cut   bool
}

func startTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(p.Cut)
	return p
}

func (p *tcpProxy) Addr() string { return p.ln.Addr().String() }

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		if !p.track(c, up) {
			continue
		}
		go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
		go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
	}
}

func (p *tcpProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

// Cut makes the API server unreachable through the proxy.
func (p *tcpProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	_ = p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
}

// kubeconfigVia writes a copy of the cluster's admin kubeconfig whose
// server is server.
func kubeconfigVia(t *testing.T, server string) string {
	t.Helper()
	return kubeconfigOfVia(t, cluster.Kubeconfig(), server)
}

// kubeconfigOfVia writes a copy of the kubeconfig at path whose server is
// server.
func kubeconfigOfVia(t *testing.T, path, server string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = server
	}
	out := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// neverReadyChart is a ConfigMap and a Deployment whose pods never become
// ready (devcluster's never-ready label) when .Values.ready is false.
func neverReadyChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "web")
	testfiles.Write(t, dir, map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"values.yaml": "ready: false\n",
		"templates/all.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  ready: {{ .Values.ready | quote }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: 1
  selector:
    matchLabels:
      app: {{ .Release.Name }}
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}
        {{- if not .Values.ready }}
        ` + devcluster.LabelNeverReady + `: "true"
        {{- end }}
    spec:
      containers:
        - name: web
          image: "nginx:1.27"
`,
	})
	return dir
}

// startApply runs convoy apply in-process until ctx ends; its stderr
// (the line view) is readable while it runs.
func startApply(ctx context.Context, args ...string) (done <-chan int, out, errOut *syncBuffer) {
	out, errOut = &syncBuffer{}, &syncBuffer{}
	ch := make(chan int, 1)
	go func() {
		ch <- execute(ctx, append([]string{"apply", "--auto-approve", "--no-progress"}, args...), streams{In: strings.NewReader(""), Out: out, Err: errOut})
	}()
	return ch, out, errOut
}

// dropLock removes a stack's lock a run that lost its API server left.
func dropLock(t *testing.T, stack string) {
	t.Cleanup(func() {
		_ = cluster.Client().CoordinationV1().Leases(stacklock.Namespace).Delete(context.Background(), stacklock.Name(stack), metav1.DeleteOptions{})
	})
}

// An API server cut while a release waits (a Deployment that never becomes
// ready, a timeout of ten minutes) is named unreachable, in the line view
// while it lasts and in the final error, which names what convoy stopped
// waiting for; the run gives up after --unreachable-timeout, not after the
// release's timeout.
func TestUnreachableAPIServerIsNamedAndGivenUpOn(t *testing.T) {
	ns := cluster.Namespace(t)
	proxy := startTCPProxy(t, strings.TrimPrefix(cluster.RESTConfig().Host, "https://"))
	server := "https://" + proxy.Addr()
	kc := kubeconfigVia(t, server)
	stack := "cut-" + ns
	dropLock(t, stack)
	dir := writeStack(t, fmt.Sprintf("stack %q {\n  default_namespace = %q\n}\nrelease \"web\" {\n  chart   = %q\n  wait    = true\n  timeout = \"10m\"\n}\n", stack, ns, neverReadyChart(t)))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, out, errOut := startApply(ctx, "-C", dir, "--kubeconfig", kc, "--unreachable-timeout", "3s")
	devtest.Eventually(t, 2*time.Minute, func() bool { return strings.Contains(errOut.String(), "waiting for 2 objects to be ready") },
		func() string { return "the apply never waited for its 2 objects:\n" + errOut.String() })
	cut := time.Now()
	proxy.Cut()

	var code int
	select {
	case code = <-done:
	case <-time.After(2 * time.Minute):
		cancel()
		<-done
		t.Fatalf("still waiting 2m after the API server was cut (the release's timeout is 10m):\n%s\n%s", out, errOut)
	}
	took := time.Since(cut)
	all := out.String() + errOut.String()
	want := fmt.Sprintf("API server %s unreachable since ", server)
	stopped := fmt.Sprintf("stopped waiting for apps/v1 Deployment %s/web", ns)
	if code != 1 || !strings.Contains(out.String(), want) || !strings.Contains(out.String(), stopped) {
		t.Fatalf("exit %d; want the API server named unreachable and %q in the result:\n%s\n%s", code, stopped, out, errOut)
	}
	if !strings.Contains(errOut.String(), want) || !strings.Contains(errOut.String(), "giving up at ") {
		t.Fatalf("the line view did not say the API server is unreachable:\n%s", errOut)
	}
	if strings.Contains(all, "timed out after") {
		t.Fatalf("an unreachable API server reported as a timeout:\n%s", all)
	}
	t.Logf("gave up %s after the cut (bound 3s, release timeout 10m):\n%s\n%s", took.Round(100*time.Millisecond), out, errOut)
}

// dropProxy is an HTTP proxy to the API server (its own admin credentials)
// that closes, once, the connection of the first server-side apply it
// reads, without answering: a connection dropped under a request that was
// sent.
type dropProxy struct {
	srv     *http.Server
	addr    string
	dropped atomic.Int64
}

func startDropProxy(t *testing.T, cfg *rest.Config) *dropProxy {
	t.Helper()
	rp := adminProxy(t, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{addr: ln.Addr().String()}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && strings.HasPrefix(r.Header.Get("Content-Type"), "application/apply-patch") && p.dropped.CompareAndSwap(0, 1) {
			_, _ = io.Copy(io.Discard, r.Body)
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = conn.Close()
			}
			return
		}
		rp.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() { _ = p.srv.Close() })
	return p
}

// adminProxy forwards HTTP requests to cfg's API server with cfg's
// credentials.
func adminProxy(t *testing.T, cfg *rest.Config) *httputil.ReverseProxy {
	t.Helper()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	return &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport:     rt,
		FlushInterval: -1, // watches stream
	}
}

// A connection dropped under a server-side apply is a blip: the request is
// sent again and the apply succeeds.
func TestDroppedConnectionDoesNotFailTheApply(t *testing.T) {
	ns := cluster.Namespace(t)
	proxy := startDropProxy(t, cluster.RESTConfig())
	kc := kubeconfigVia(t, "http://"+proxy.addr)
	dropKubeconfigAuth(t, kc)
	stack := "drop-" + ns
	dir := writeStack(t, fmt.Sprintf("stack %q {\n  default_namespace = %q\n}\nrelease \"web\" {\n  chart   = %q\n  values  = [{ ready = true }]\n  timeout = \"2m\"\n}\n", stack, ns, neverReadyChart(t)))

	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress")
	if proxy.dropped.Load() != 1 {
		t.Fatalf("no connection was dropped:\n%s\n%s", out, errOut)
	}
	if code != 0 {
		t.Fatalf("exit %d after one dropped connection:\n%s\n%s", code, out, errOut)
	}
	t.Logf("one connection dropped; the apply:\n%s", out)
}

// dropKubeconfigAuth takes the credentials out of a kubeconfig whose server
// is a proxy that brings its own.
func dropKubeconfigAuth(t *testing.T, path string) {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.CertificateAuthorityData, c.CertificateAuthority = nil, ""
	}
	for name := range cfg.AuthInfos {
		cfg.AuthInfos[name] = clientcmdapi.NewAuthInfo()
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

// A plan made while an apply holds the stack's releases names that apply
// (command, run id, holder, since when), not `convoy recover`.
func TestPlanDuringApplyNamesTheApply(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	stack := "busy-" + ns
	dir := writeStack(t, fmt.Sprintf("stack %q {\n  default_namespace = %q\n}\nrelease \"web\" {\n  chart   = %q\n  wait    = true\n  timeout = \"10m\"\n}\n", stack, ns, neverReadyChart(t)))

	ctx, cancel := context.WithCancel(context.Background())
	done, out, errOut := startApply(ctx, "-C", dir, "--kubeconfig", kc)
	defer func() {
		cancel()
		<-done
	}()
	devtest.Eventually(t, 2*time.Minute, func() bool { return strings.Contains(errOut.String(), "waiting for 2 objects to be ready") },
		func() string { return "the apply never waited for its 2 objects:\n" + errOut.String() })
	holder, err := cluster.Client().CoordinationV1().Leases(stacklock.Namespace).Get(context.Background(), stacklock.Name(stack), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the apply holds no lock: %v\n%s\n%s", err, out, errOut)
	}
	runID := holder.Annotations["convoy.dev/run"]

	code, pout, perr := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	msg := pout + perr
	want := fmt.Sprintf("convoy apply (run %s, %s) has held stack %q since ", runID, *holder.Spec.HolderIdentity, stack)
	if code == 0 || runID == "" || !strings.Contains(msg, want) || !strings.Contains(msg, "is deploying it") || strings.Contains(msg, "convoy recover") {
		t.Fatalf("plan during an apply: exit %d; want %q:\n%s", code, want, msg)
	}
	t.Logf("plan during the apply: %s", strings.TrimSpace(msg))
}
