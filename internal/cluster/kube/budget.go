package kube

import (
	"net/http"
	"sync"
	"sync/atomic"

	"golang.org/x/time/rate"
	"k8s.io/client-go/rest"
)

// Budget is a request rate per cluster shared by every client built from
// a configuration it wrapped: one token bucket per API server
// (ClusterIDOf), whichever run or Stack the client serves. A client's own
// QPS and burst still apply on top of it. Safe for concurrent use.
type Budget struct {
	// QPS and Burst of each cluster's bucket; QPS <= 0: unlimited, Burst
	// <= 0: a second's worth.
	QPS   float64
	Burst int

	mu        sync.Mutex
	byCluster map[ClusterID]*rate.Limiter
	// Waits counts the requests that waited for the budget.
	Waits atomic.Int64
	// OnWait, if set, is called for each request that waits.
	OnWait func()
}

// Wrap makes every client built from cfg spend the budget of its cluster.
func (b *Budget) Wrap(cfg *rest.Config) {
	if b == nil || b.QPS <= 0 {
		return
	}
	lim := b.Limiter(ClusterIDOf(cfg))
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &budgeted{next: rt, lim: lim, b: b} })
}

// Limiter is the bucket of a cluster.
func (b *Budget) Limiter(id ClusterID) *rate.Limiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byCluster == nil {
		b.byCluster = map[ClusterID]*rate.Limiter{}
	}
	lim, ok := b.byCluster[id]
	if !ok {
		burst := b.Burst
		if burst <= 0 {
			burst = max(int(b.QPS), 1) // a second's worth
		}
		lim = rate.NewLimiter(rate.Limit(b.QPS), burst)
		b.byCluster[id] = lim
	}
	return lim
}

type budgeted struct {
	next http.RoundTripper
	lim  *rate.Limiter
	b    *Budget
}

func (t *budgeted) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.lim.Allow() {
		t.b.Waits.Add(1)
		if t.b.OnWait != nil {
			t.b.OnWait()
		}
		if err := t.lim.Wait(req.Context()); err != nil {
			return nil, err
		}
	}
	return t.next.RoundTrip(req)
}
