package release_test

import (
	"context"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
)

// TestEngineRecordClientHasTheRateLimits: the client that writes the
// release records has the rate limits of the client that applies the
// objects — the options', or convoy's defaults — never client-go's 5 QPS
// that a config without limits, or with those, would give it.
func TestEngineRecordClientHasTheRateLimits(t *testing.T) {
	cluster.Need(t)
	for _, c := range []struct {
		name string
		opts kube.Options
		qps  float32
	}{
		{"defaults", kube.Options{}, kube.DefaultQPS},
		{"given", kube.Options{QPS: 50, Burst: 60}, 50},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := cluster.RESTConfig()
			cfg.QPS, cfg.Burst = 5, 10 // client-go's defaults
			e, err := release.NewEngine(context.Background(), cfg, release.EngineOptions{Kube: c.opts})
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Client().CoreV1().RESTClient().GetRateLimiter().QPS(); got != c.qps {
				t.Fatalf("the record client's QPS is %v, want %v", got, c.qps)
			}
		})
	}
}
