package kube

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
)

// TestRateLimitDelaysAreCounted: requests within the burst are not held
// back and count nothing; past it, a request waits for its token, and
// the delay the bucket imposed (not the wall time) adds up in RateLimits
// (convoy plan --stats).
func TestRateLimitDelaysAreCounted(t *testing.T) {
	var counts RateLimits
	lim := withCountedLimit(&rest.Config{QPS: 0.5, Burst: 2}, &counts).RateLimiter
	for range 2 {
		if err := lim.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n, d := counts.Delayed.Load(), counts.Wait.Load(); n != 0 || d != 0 {
		t.Fatalf("within the burst: %d requests delayed %s", n, time.Duration(d))
	}
	// The third token comes 2 s after the first two: the request is held
	// back, counted as soon as the bucket decides, and let go here.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- lim.Wait(ctx) }()
	devtest.Eventually(t, 10*time.Second, func() bool { return counts.Delayed.Load() != 0 },
		func() string { return "the request past the burst was not counted as delayed" })
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a request whose context ended while it waited was let through")
	}
	if n, d := counts.Delayed.Load(), time.Duration(counts.Wait.Load()); n != 1 || d <= 0 || d > 2*time.Second {
		t.Fatalf("past the burst: %d requests delayed %s, want 1 of at most 2s", n, d)
	}
}

// TestRateLimitWaitEndsWithItsContext: a request whose context ends while
// it waits, or whose deadline comes before its token, is refused.
func TestRateLimitWaitEndsWithItsContext(t *testing.T) {
	var counts RateLimits
	lim := withCountedLimit(&rest.Config{QPS: 0.1, Burst: 1}, &counts).RateLimiter
	if err := lim.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := lim.Wait(ctx); err == nil {
		t.Fatal("a 10 s wait under a 1 s deadline was let through")
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if err := lim.Wait(ctx); err == nil {
		t.Fatal("a cancelled request was let through")
	}
}

// TestWithCountedLimit: each config gets a bucket of its own QPS and
// burst; an unlimited config, one with a limiter of its own, or no counts
// leave the config as it is.
func TestWithCountedLimit(t *testing.T) {
	var counts RateLimits
	cfg := &rest.Config{QPS: 7, Burst: 3}
	got := withCountedLimit(cfg, &counts)
	if got == cfg || cfg.RateLimiter != nil {
		t.Fatal("the config was modified, not copied")
	}
	if got.RateLimiter == nil || got.RateLimiter.QPS() != 7 {
		t.Fatalf("limiter %#v", got.RateLimiter)
	}
	if other := withCountedLimit(cfg, &counts); other.RateLimiter == got.RateLimiter {
		t.Fatal("two clients share a bucket")
	}
	own := flowcontrol.NewFakeAlwaysRateLimiter()
	for _, c := range []struct {
		cfg    *rest.Config
		counts *RateLimits
	}{{&rest.Config{QPS: -1}, &counts}, {&rest.Config{QPS: 7, RateLimiter: own}, &counts}, {cfg, nil}} {
		if withCountedLimit(c.cfg, c.counts) != c.cfg {
			t.Fatalf("config %+v changed", c.cfg)
		}
	}
}

// TestOptionsConfig: clients built beside a Client get its rate limits:
// the options' QPS and burst, the defaults where they give none (not
// client-go's 5 QPS), never a limiter the config carried.
func TestOptionsConfig(t *testing.T) {
	own := flowcontrol.NewFakeAlwaysRateLimiter()
	for _, c := range []struct {
		name       string
		opts       Options
		cfg        rest.Config
		qps        float32
		burst      int
		hasLimiter bool
	}{
		{"none given", Options{}, rest.Config{}, DefaultQPS, DefaultBurst, false},
		{"options win", Options{QPS: 50, Burst: 70}, rest.Config{QPS: 5, Burst: 10, RateLimiter: own}, 50, 70, false},
		{"QPS without burst", Options{QPS: 50}, rest.Config{}, 50, DefaultBurst, false},
		{"unlimited", Options{QPS: -1}, rest.Config{}, -1, DefaultBurst, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.opts.Config(&c.cfg)
			if got.QPS != c.qps || got.Burst != c.burst || (got.RateLimiter != nil) != c.hasLimiter {
				t.Fatalf("QPS %v burst %d limiter %v", got.QPS, got.Burst, got.RateLimiter)
			}
		})
	}
}
