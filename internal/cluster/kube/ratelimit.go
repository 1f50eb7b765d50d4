package kube

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/rest"
)

// RateLimits counts what the clients' own rate limiters (--kube-qps,
// --kube-burst) cost the requests they let through.
type RateLimits struct {
	// Wait is the delay the limiters imposed, in nanoseconds, summed over
	// requests: ten requests held back 1 s at once add 10 s.
	Wait atomic.Int64
	// Delayed counts the requests a limiter held back at all.
	Delayed atomic.Int64
}

// withCountedLimit returns cfg with a token bucket of its QPS and burst
// that counts into counts: the bucket client-go would build for a client
// of cfg (flowcontrol.NewTokenBucketRateLimiter), measured. Every client
// built needs its own config from this (client-go gives each its own
// bucket). cfg unlimited (QPS <= 0) or already carrying a limiter, or
// counts nil, is returned as it is.
func withCountedLimit(cfg *rest.Config, counts *RateLimits) *rest.Config {
	if counts == nil || cfg.RateLimiter != nil || cfg.QPS <= 0 {
		return cfg
	}
	cfg = rest.CopyConfig(cfg)
	cfg.RateLimiter = &countingBucket{lim: rate.NewLimiter(rate.Limit(cfg.QPS), cfg.Burst), qps: cfg.QPS, counts: counts}
	return cfg
}

// countingBucket is a token bucket that counts the delays it decides. It
// counts the delay the bucket imposed, not the wall time around its Wait:
// the wall time also holds the time the goroutine, runnable, waited for a
// CPU, which on a busy machine summed over thousands of requests made
// convoy's own limiter look like a bottleneck when it held nothing back.
type countingBucket struct {
	lim    *rate.Limiter
	qps    float32
	counts *RateLimits
}

func (b *countingBucket) TryAccept() bool { return b.lim.Allow() }
func (b *countingBucket) Accept()         { _ = b.Wait(context.Background()) }
func (b *countingBucket) Stop()           {}
func (b *countingBucket) QPS() float32    { return b.qps }

// Wait takes a token, waiting as long as the bucket says, as
// rate.Limiter.Wait does: it refuses at once a wait the context's
// deadline would cut short, and gives the token back when ctx ends first.
func (b *countingBucket) Wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := time.Now()
	r := b.lim.ReserveN(now, 1)
	if !r.OK() {
		return fmt.Errorf("rate: Wait(n=1) exceeds the limiter's burst %d", b.lim.Burst())
	}
	d := r.DelayFrom(now)
	if d == 0 {
		return nil
	}
	if deadline, ok := ctx.Deadline(); ok && deadline.Sub(now) < d {
		r.CancelAt(now)
		return errors.New("rate: Wait(n=1) would exceed context deadline")
	}
	b.counts.Delayed.Add(1)
	b.counts.Wait.Add(int64(d))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		r.Cancel()
		return ctx.Err()
	}
}
