package kube

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// slowLimiter makes every Wait take at least d.
type slowLimiter struct {
	flowcontrol.RateLimiter
	d time.Duration
}

func (s slowLimiter) Wait(context.Context) error { time.Sleep(s.d); return nil }

// TestRateLimitWaitIsCounted: the time a request waits on the client's
// rate limiter adds up in Options.RateLimitWait (convoy plan --stats).
func TestRateLimitWaitIsCounted(t *testing.T) {
	var waited atomic.Int64
	w := &waitCounting{RateLimiter: slowLimiter{d: 5 * time.Millisecond}, waited: &waited}
	for range 2 {
		if err := w.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if got := time.Duration(waited.Load()); got < 10*time.Millisecond {
		t.Fatalf("waited %s, want at least 10ms", got)
	}
}

// TestWithWaitCounting: each config gets a bucket of its own QPS and burst;
// an unlimited config, one with a limiter of its own, or no counter leave
// the config as it is.
func TestWithWaitCounting(t *testing.T) {
	var waited atomic.Int64
	cfg := &rest.Config{QPS: 7, Burst: 3}
	got := withWaitCounting(cfg, &waited)
	if got == cfg || cfg.RateLimiter != nil {
		t.Fatal("the config was modified, not copied")
	}
	wc, ok := got.RateLimiter.(*waitCounting)
	if !ok || wc.QPS() != 7 {
		t.Fatalf("limiter %#v", got.RateLimiter)
	}
	if other := withWaitCounting(cfg, &waited); other.RateLimiter == got.RateLimiter {
		t.Fatal("two clients share a bucket")
	}
	own := flowcontrol.NewFakeAlwaysRateLimiter()
	for _, c := range []struct {
		cfg    *rest.Config
		waited *atomic.Int64
	}{{&rest.Config{QPS: -1}, &waited}, {&rest.Config{QPS: 7, RateLimiter: own}, &waited}, {cfg, nil}} {
		if withWaitCounting(c.cfg, c.waited) != c.cfg {
			t.Fatalf("config %+v changed", c.cfg)
		}
	}
}
