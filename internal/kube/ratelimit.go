package kube

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// withWaitCounting returns cfg with a token bucket of its QPS and burst
// that adds the time each request waits for it to waited: the bucket
// client-go would build for a client of cfg, measured. Every client built
// needs its own config from this (client-go gives each its own bucket).
// cfg unlimited (QPS < 0) or already carrying a limiter is returned as it
// is.
func withWaitCounting(cfg *rest.Config, waited *atomic.Int64) *rest.Config {
	if waited == nil || cfg.RateLimiter != nil || cfg.QPS <= 0 {
		return cfg
	}
	cfg = rest.CopyConfig(cfg)
	cfg.RateLimiter = &waitCounting{RateLimiter: flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst), waited: waited}
	return cfg
}

// waitCounting is a rate limiter that counts the time spent in Wait.
type waitCounting struct {
	flowcontrol.RateLimiter
	waited *atomic.Int64
}

func (w *waitCounting) Wait(ctx context.Context) error {
	start := time.Now()
	err := w.RateLimiter.Wait(ctx)
	w.waited.Add(int64(time.Since(start)))
	return err
}
