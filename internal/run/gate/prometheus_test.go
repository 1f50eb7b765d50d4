package gate_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/run/gate"
)

// startPrometheus runs a real Prometheus (CONVOY_PROMETHEUS, built from
// the Go module proxy by hack/build-tools.sh) scraping the test's
// /metrics every second, and returns its address once a query returns a
// sample of every series the endpoint serves, and the target's instance
// label. Stopped when t ends.
func startPrometheus(t *testing.T, metrics string, series int) (address, instance string) {
	t.Helper()
	devtest.SkipShort(t, "Prometheus")
	bin, err := devcluster.LocatePrometheus(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, metrics)
	}))
	t.Cleanup(target.Close)

	dir := t.TempDir()
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: gate-test
    static_configs:
      - targets: [%q]
`, strings.TrimPrefix(target.URL, "http://"))
	confPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + freePort(t)
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+confPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	address = "http://" + addr
	instance = strings.TrimPrefix(target.URL, "http://")
	// Ready when a query returns every series: Prometheus is up, has
	// scraped, and the samples are queryable.
	var r gate.Result
	devtest.Eventually(t, 60*time.Second, func() bool {
		r = gate.EvalPrometheus(context.Background(), gate.Prometheus{Address: address, Query: `count({job="gate-test", __name__=~"convoy_.*"})`, Max: 1e9})
		return r.Passed && strings.Contains(r.Output, fmt.Sprintf("} %d ≤", series))
	}, func() string {
		log, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
		return fmt.Sprintf("prometheus on %s never returned the %d series: %s\n%s", addr, series, r.Output, log)
	})
	return address, instance
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

const gateMetrics = `# TYPE convoy_gate_error_ratio gauge
convoy_gate_error_ratio{route="a"} 0.002
convoy_gate_error_ratio{route="b"} 0.004
`

// The metric gate against a real Prometheus: under the maximum it
// passes, over it fails naming the sample; every way the query cannot be
// answered with numbers fails closed with the reason.
func TestPrometheusGate(t *testing.T) {
	address, instance := startPrometheus(t, gateMetrics, 2)
	ctx := context.Background()
	const q = "convoy_gate_error_ratio"
	labels := func(route string) string {
		return fmt.Sprintf(`convoy_gate_error_ratio{instance=%q, job="gate-test", route=%q}`, instance, route)
	}

	r := gate.EvalPrometheus(ctx, gate.Prometheus{Address: address, Query: q, Max: 0.01})
	want := fmt.Sprintf("query %q at %s:\n%s 0.002 ≤ max 0.01\n%s 0.004 ≤ max 0.01", q, address, labels("a"), labels("b"))
	if !r.Passed || r.Err != nil || r.Gate != gate.KindPrometheus || r.Output != want {
		t.Fatalf("under max:\n%s\nwant\n%s\n(%+v)", r.Output, want, r)
	}

	r = gate.EvalPrometheus(ctx, gate.Prometheus{Address: address, Query: q, Max: 0.003})
	if r.Passed || r.Err != nil || !strings.Contains(r.Output, labels("b")+" 0.004 > max 0.003") || !strings.Contains(r.Output, labels("a")+" 0.002 ≤ max 0.003") {
		t.Fatalf("over max: %+v", r)
	}

	// A scalar; the boundary is inclusive.
	r = gate.EvalPrometheus(ctx, gate.Prometheus{Address: address, Query: "scalar(max(" + q + "))", Max: 0.004})
	if !r.Passed || r.Output != fmt.Sprintf("query %q at %s:\nscalar 0.004 ≤ max 0.004", "scalar(max("+q+"))", address) {
		t.Fatalf("scalar: %+v", r)
	}

	for _, tc := range []struct {
		name, query, output string
		err                 bool
	}{
		{"no data", "convoy_gate_missing_metric", "no data (an empty result fails the gate)", false},
		{"NaN", "0/0", "1 of 1 samples are NaN (scalar)", true},
		{"bad query", "rate(" + q, "Prometheus answered 400 Bad Request: bad_data: ", true},
		{"range vector", q + "[1m]", "the query returns a range vector", true},
		{"string", `"text"`, "the query returns a string", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gate.EvalPrometheus(ctx, gate.Prometheus{Address: address, Query: tc.query, Max: 1})
			if r.Passed || (r.Err != nil) != tc.err || !strings.Contains(r.Output, tc.output) || !strings.HasPrefix(r.Output, fmt.Sprintf("query %q at %s", tc.query, address)) {
				t.Fatalf("%+v", r)
			}
		})
	}
	// A vector whose samples are NaN names the series.
	r = gate.EvalPrometheus(ctx, gate.Prometheus{Address: address, Query: q + " * 0/0", Max: 1})
	if r.Err == nil || !strings.Contains(r.Err.Error(), "2 of 2 samples are NaN ({") || !strings.Contains(r.Output, `route="a"} NaN: not a number`) {
		t.Fatalf("NaN vector: %+v", r)
	}

	// Not Prometheus's API where the address says: a 404.
	r = gate.EvalPrometheus(ctx, gate.Prometheus{Address: address + "/elsewhere", Query: q, Max: 1})
	if r.Passed || r.Err == nil || !strings.Contains(r.Err.Error(), "Prometheus answered 404 Not Found") {
		t.Fatalf("wrong path: %+v", r)
	}
}

// An address that does not answer fails the gate, closed, with the
// error; a password in the address appears nowhere.
func TestPrometheusGateFailsClosed(t *testing.T) {
	ctx := context.Background()

	// Nothing listens.
	dead := "http://prom:hunter2pw@127.0.0.1:" + freePort(t)
	r := gate.EvalPrometheus(ctx, gate.Prometheus{Address: dead, Query: "up", Max: 1})
	if r.Passed || r.Err == nil || !strings.Contains(r.Output, "connection refused") {
		t.Fatalf("dead address: %+v", r)
	}
	if strings.Contains(r.Output, "hunter2pw") || strings.Contains(r.Err.Error(), "hunter2pw") {
		t.Fatalf("the password shows: %s / %v", r.Output, r.Err)
	}

	// Something listens and never answers: the timeout.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	start := time.Now()
	r = gate.EvalPrometheus(ctx, gate.Prometheus{Address: "http://" + l.Addr().String(), Query: "up", Max: 1, Timeout: 300 * time.Millisecond})
	if r.Passed || r.Err == nil || !strings.Contains(r.Output, "no answer within 300ms") {
		t.Fatalf("silent address: %+v", r)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the timeout did not bound the query: %s", took)
	}
}

// What is wrong with the spec fails before any request.
func TestPrometheusGateBadSpec(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec gate.Prometheus
		want string
	}{
		{"scheme", gate.Prometheus{Address: "ftp://prom:9090", Query: "up", Max: 1}, "address ftp://prom:9090 is not an http or https URL"},
		{"no host", gate.Prometheus{Address: "prom:9090", Query: "up", Max: 1}, "is not an http or https URL"},
		{"query in address", gate.Prometheus{Address: "http://prom:9090/?x=1", Query: "up", Max: 1}, "has a query or fragment"},
		{"unparsable", gate.Prometheus{Address: "http://prom:9090/%zz", Query: "up", Max: 1}, "address does not parse"},
		{"empty query", gate.Prometheus{Address: "http://prom:9090", Query: " ", Max: 1}, "the query is empty"},
		{"NaN max", gate.Prometheus{Address: "http://prom:9090", Query: "up", Max: math.NaN()}, "max is NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gate.EvalPrometheus(context.Background(), tc.spec)
			if r.Passed || r.Err == nil || !strings.Contains(r.Err.Error(), tc.want) || !strings.Contains(r.Output, tc.want) {
				t.Fatalf("%+v", r)
			}
		})
	}
}
