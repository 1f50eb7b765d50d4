package release_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"k8s.io/client-go/rest"
)

// recordedExchange is one request to the records' resource: how its body
// was sent and how the answer came.
type recordedExchange struct {
	method, path, sent, got string
}

// exchangeLog keeps the exchanges of every client built from one config:
// each client's transport is wrapped by a recorder of its own.
type exchangeLog struct {
	mu   sync.Mutex
	seen []recordedExchange
}

func (l *exchangeLog) wrap(next http.RoundTripper) http.RoundTripper {
	return &exchangeRecorder{next: next, log: l}
}

type exchangeRecorder struct {
	next http.RoundTripper
	log  *exchangeLog
}

func (r *exchangeRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil && (strings.Contains(req.URL.Path, "/secrets") || strings.Contains(req.URL.Path, "/configmaps")) {
		r.log.mu.Lock()
		r.log.seen = append(r.log.seen, recordedExchange{req.Method, req.URL.Path, req.Header.Get("Content-Type"), resp.Header.Get("Content-Type")})
		r.log.mu.Unlock()
	}
	return resp, err
}

// TestRecordsTravelAsProtobuf: the records (Secrets or ConfigMaps, with
// both of Helm's drivers) are written and read as protobuf — a payload
// is its bytes on the wire, not base64 of them in JSON — and read back as
// written.
func TestRecordsTravelAsProtobuf(t *testing.T) {
	for _, tt := range []struct {
		name   string
		driver release.StorageDriver
	}{{"Secret", release.DriverSecret}, {"ConfigMap", release.DriverConfigMap}} {
		t.Run(tt.name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			ctx := context.Background()
			rec := &exchangeLog{}
			cfg := rest.CopyConfig(cluster.RESTConfig())
			cfg.WrapTransport = rec.wrap
			eng, err := release.NewEngine(ctx, cfg, release.EngineOptions{Driver: tt.driver})
			if err != nil {
				t.Fatal(err)
			}
			store := eng.Storage(ns)
			r := &release.Release{
				Name: "api", Namespace: ns, Version: 1,
				Info:     &release.Info{Status: release.StatusDeployed, LastDeployed: time.Unix(1700000000, 0).UTC()},
				Config:   map[string]any{"replicas": float64(2)},
				Manifest: "---\n# Source: x/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api\n",
			}
			if err := store.Create(ctx, r); err != nil {
				t.Fatal(err)
			}
			r.Info.Status = release.StatusSuperseded
			if err := store.Update(ctx, r); err != nil {
				t.Fatal(err)
			}
			hs, err := eng.Histories(ctx, ns)
			if err != nil {
				t.Fatal(err)
			}
			if h := hs["api"]; len(h) != 1 || h[0].Manifest != r.Manifest || h[0].Info.Status != release.StatusSuperseded || h[0].Config["replicas"] != float64(2) {
				t.Fatalf("read back: %+v", hs)
			}
			got, err := store.Get(ctx, "api", 1)
			if err != nil || got.Manifest != r.Manifest {
				t.Fatalf("get: %v, %+v", err, got)
			}

			rec.mu.Lock()
			defer rec.mu.Unlock()
			var writes, reads int
			for _, x := range rec.seen {
				if x.method == http.MethodPost || x.method == http.MethodPut {
					writes++
					if !strings.HasPrefix(x.sent, "application/vnd.kubernetes.protobuf") {
						t.Errorf("%s %s sent as %q", x.method, x.path, x.sent)
					}
				}
				if x.method == http.MethodGet {
					reads++
				}
				if !strings.HasPrefix(x.got, "application/vnd.kubernetes.protobuf") {
					t.Errorf("%s %s answered as %q", x.method, x.path, x.got)
				}
			}
			if writes < 2 || reads < 2 {
				t.Fatalf("%d writes and %d reads of the records seen: %+v", writes, reads, rec.seen)
			}
		})
	}
}
