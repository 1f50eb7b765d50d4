package run

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"k8s.io/client-go/rest"
)

// Concurrent runs reaching one cluster connect once; a failed connection
// is not kept; Forget and MaxAge make the next run connect afresh.
func TestConnectionsKeep(t *testing.T) {
	var c Connections
	var builds atomic.Int64
	build := func() (*release.Engine, error) {
		builds.Add(1)
		return new(release.Engine), nil
	}
	var wg sync.WaitGroup
	engines := make([]*release.Engine, 8)
	for i := range engines {
		wg.Go(func() {
			eng, err := c.engine("a", build)
			if err != nil {
				t.Error(err)
			}
			engines[i] = eng
		})
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Fatalf("8 concurrent runs connected %d times, want 1", n)
	}
	for _, e := range engines {
		if e != engines[0] {
			t.Fatal("concurrent runs got different connections")
		}
	}
	if _, err := c.engine("b", build); err != nil || builds.Load() != 2 {
		t.Fatalf("another cluster: err %v, %d connections, want 2", err, builds.Load())
	}

	boom := errors.New("connection refused")
	if _, err := c.engine("c", func() (*release.Engine, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed connection: %v", err)
	}
	if _, err := c.engine("c", build); err != nil {
		t.Fatalf("a failed connection was kept: %v", err)
	}

	c.Forget()
	before := builds.Load()
	if _, err := c.engine("a", build); err != nil || builds.Load() != before+1 {
		t.Fatalf("after Forget: err %v, connected %d times, want 1", err, builds.Load()-before)
	}

	c.MaxAge = time.Nanosecond
	before = builds.Load()
	devtest.Eventually(t, time.Second, func() bool {
		if _, err := c.engine("a", build); err != nil {
			t.Fatal(err)
		}
		return builds.Load() != before
	}, func() string { return "a connection older than MaxAge was kept" })
}

// Connections differ by who connects and how, not only by the server.
func TestConnectionKey(t *testing.T) {
	base := func() *rest.Config {
		return &rest.Config{Host: "https://k8s.example:6443", BearerToken: "t1", QPS: 50, Burst: 100}
	}
	k := connectionKey(base(), release.DriverSecret)
	same := base()
	same.Host = "https://K8S.example:6443/"
	if connectionKey(same, release.DriverSecret) != k {
		t.Error("the same server spelled differently got another connection")
	}
	for name, mod := range map[string]func(*rest.Config){
		"token":       func(c *rest.Config) { c.BearerToken = "t2" },
		"client cert": func(c *rest.Config) { c.TLSClientConfig.CertData = []byte("cert") },
		"impersonate": func(c *rest.Config) { c.Impersonate.UserName = "alice" },
		"server":      func(c *rest.Config) { c.Host = "https://other.example:6443" },
		"qps":         func(c *rest.Config) { c.QPS = 5 },
	} {
		cfg := base()
		mod(cfg)
		if connectionKey(cfg, release.DriverSecret) == k {
			t.Errorf("%s: shares the connection", name)
		}
	}
	if connectionKey(base(), release.DriverConfigMap) == k {
		t.Error("another storage driver shares the connection")
	}
}
