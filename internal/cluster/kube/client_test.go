package kube_test

import (
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
)

// client-go's own limits (5 QPS) must never be what a whole-environment
// apply waits on: New's defaults replace whatever the config carried, and
// Options can still set them.
func TestRateLimits(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	ref := kube.Ref{Version: "v1", Kind: "ServiceAccount", Namespace: ns, Name: "default"}
	gets := func(c *kube.Client, n int) time.Duration {
		ctx := testContext(t, 120*time.Second)
		start := time.Now()
		for range n {
			if _, err := c.Get(ctx, ref); err != nil {
				t.Fatal(err)
			}
		}
		return time.Since(start)
	}

	cfg := cluster.RESTConfig()
	cfg.QPS, cfg.Burst = 5, 10 // client-go's defaults
	fast, err := kube.New(cfg, kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// At 5 QPS, 150 requests take half a minute.
	if d := gets(fast, 150); d > 10*time.Second {
		t.Errorf("150 reads with default Options took %s: the config's 5 QPS won", d)
	}

	slow, err := kube.New(cluster.RESTConfig(), kube.Options{QPS: 5, Burst: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d := gets(slow, 11); d < 1500*time.Millisecond {
		t.Errorf("11 reads at Options{QPS: 5, Burst: 1} took %s, want about 2s", d)
	}
}
