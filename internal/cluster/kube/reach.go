package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// DefaultUnreachable is how long an API server may go without answering
// before convoy stops waiting on what it can no longer observe, and stops
// retrying what it cannot write (--unreachable-timeout). It is independent
// of a release's timeout: a wait of ten minutes gives up on a cluster that
// is gone after this, not after ten minutes.
const DefaultUnreachable = 30 * time.Second

// Reach follows whether one API server answers. Every request of the
// clients built from a configuration it wrapped (Wrap) tells it: an HTTP
// response of any status means the server is reachable; a request that got
// none (refused, reset, a lost connection, a TLS handshake that timed out)
// means it is not, since the first such request after the last answer.
// Safe for concurrent use.
type Reach struct {
	server string
	bound  time.Duration

	mu    sync.Mutex
	since time.Time // zero: reachable
	cause error     // the latest failure's
	last  time.Time // the latest failure
	// answer is when the server last answered (zero: not yet); probing
	// says a probe is under way (one at a time).
	answer  time.Time
	probing bool
}

// quietProbe is how long a wait lets its API server go without answering
// anything before it probes it: a server that stopped (SIGSTOP, a frozen
// VM) refuses nothing, and the watches of a wait only stay silent.
const quietProbe = 3 * time.Second

// probeDue claims the probe of a server that has not answered for
// quietProbe, or that is down, unless another probe is under way; done
// gives it back.
func (r *Reach) probeDue(now time.Time) (due bool, done func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.probing || (r.since.IsZero() && now.Sub(r.answer) < quietProbe) {
		return false, nil
	}
	r.probing = true
	return true, func() {
		r.mu.Lock()
		r.probing = false
		r.mu.Unlock()
	}
}

// timedOut tells the Reach that a request sent at sent got no answer
// within its own bound: the server has not answered since then.
func (r *Reach) timedOut(sent time.Time, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.answer.After(sent) {
		return // it answered another request since
	}
	if r.since.IsZero() || sent.Sub(r.last) > r.quietGap() {
		r.since = sent
	}
	r.last, r.cause = time.Now(), err
}

// quietGap is how long requests may stop failing (none sent) before a
// failure counts as a new outage rather than the old one going on: an
// outage is followed by retries and probes a few seconds apart, and a
// failure after a long quiet says nothing of the time in between.
func (r *Reach) quietGap() time.Duration { return max(r.bound, 10*time.Second) }

// NewReach follows the API server cfg connects to; bound is how long it
// may be unreachable before the clients give up (0: DefaultUnreachable).
func NewReach(cfg *rest.Config, bound time.Duration) *Reach {
	if bound <= 0 {
		bound = DefaultUnreachable
	}
	return &Reach{server: string(ClusterIDOf(cfg)), bound: bound}
}

// neverAnsweredBound bounds the outage of an API server that has not
// answered once since its clients were built: a wrong address, or a
// cluster dead before the run began, fails within seconds rather than
// after the whole --unreachable-timeout, which is for riding through an
// outage of a server that was there (an API server restarting mid-run).
const neverAnsweredBound = 4 * time.Second

// Bound is how long the API server may be unreachable before the clients
// give up: the bound NewReach was given, or less (neverAnsweredBound)
// while the server has never answered.
func (r *Reach) Bound() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.boundLocked()
}

func (r *Reach) boundLocked() time.Duration {
	if r.answer.IsZero() {
		return min(r.bound, neverAnsweredBound)
	}
	return r.bound
}

// Outage is an API server that stopped answering: since when, and how
// the latest request failed (what it says now: a connection that broke at
// first is refused later).
type Outage struct {
	Server string
	Since  time.Time
	Cause  error
}

func (o Outage) String() string {
	return fmt.Sprintf("API server %s unreachable since %s (%v)", o.Server, o.Since.Format(time.TimeOnly), o.Cause)
}

// Down is the current outage, nil while the API server answers.
func (r *Reach) Down() *Outage {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.since.IsZero() {
		return nil
	}
	return &Outage{Server: r.server, Since: r.since, Cause: r.cause}
}

// givenUp is the outage when it has lasted longer than the bound.
func (r *Reach) givenUp(now time.Time) *Outage {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.since.IsZero() || now.Sub(r.since) <= r.boundLocked() {
		return nil
	}
	return &Outage{Server: r.server, Since: r.since, Cause: r.cause}
}

func (r *Reach) failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.since.IsZero() || now.Sub(r.last) > r.quietGap() {
		r.since = now
	}
	r.last, r.cause = now, err
}

func (r *Reach) answered() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.since, r.cause, r.answer = time.Time{}, nil, time.Now()
}

// requestBound is how long one request may go unanswered while the server
// is down (0: no bound, it answers): a server that stopped answering
// would otherwise hold it until the connection's health check gives up
// (client-go's HTTP/2 pings: 45 s).
func (r *Reach) requestBound() time.Duration {
	if r.Down() == nil {
		return 0
	}
	return probeTimeout
}

// failFast is the outage a request is not even sent to: given up on, and
// a request failed within the last probeTimeout (the next one after that
// is sent, so that a server that is back is seen).
func (r *Reach) failFast(now time.Time) *Outage {
	o := r.givenUp(now)
	if o == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Sub(r.last) >= probeTimeout {
		return nil
	}
	return o
}

// UnreachableError is an operation given up because its cluster's API
// server has not answered for longer than the bound (--unreachable-timeout).
// It is final: retrying it sooner than the next run does not help.
type UnreachableError struct {
	Outage
	// Stopped are the objects a wait stopped waiting for: whether they
	// became ready is unknown.
	Stopped []Ref
}

func (e *UnreachableError) Error() string {
	msg := e.Outage.String()
	if len(e.Stopped) == 0 {
		return msg
	}
	names := make([]string, len(e.Stopped))
	for i, ref := range e.Stopped {
		names[i] = ref.String()
	}
	return msg + ": stopped waiting for " + strings.Join(names, ", ")
}

// healthEvery is how often a wait checks that its API server answers.
const healthEvery = time.Second

// probeTimeout bounds a wait's probe of an API server that stopped
// answering, and each request while it is down: with quietProbe and
// healthEvery, a server that stops answering is known to within 8 s.
const probeTimeout = 4 * time.Second

// watchHealth is a wait's view of its API server: the informers of a
// watch retry in silence, so the wait asks the Reach every healthEvery,
// reports an outage as it starts and ends, probes the server while it
// lasts, and gives up once it has lasted longer than the bound.
type watchHealth struct {
	reach  *Reach
	probe  func(context.Context) error
	report func(*Outage) // nil: nobody is told
	shown  *Outage
}

func (h *watchHealth) check(ctx context.Context) error {
	if h == nil || h.reach == nil {
		return nil
	}
	h.show(h.reach.Down())
	if o := h.reach.givenUp(time.Now()); o != nil && ctx.Err() == nil {
		return &UnreachableError{Outage: *o}
	}
	if due, done := h.reach.probeDue(time.Now()); due {
		// The informers may not have asked again since they failed, and
		// a server that stopped answering fails nothing: a watch only
		// stays silent.
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		sent := time.Now()
		if err := h.probe(pctx); err != nil && ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded) {
			h.reach.timedOut(sent, fmt.Errorf("no answer within %s", probeTimeout))
		}
		cancel()
		done()
		h.show(h.reach.Down())
	}
	if o := h.reach.givenUp(time.Now()); o != nil && ctx.Err() == nil {
		return &UnreachableError{Outage: *o}
	}
	return nil
}

// show tells of an outage as it starts (or starts anew) and ends.
func (h *watchHealth) show(o *Outage) {
	switch {
	case o == nil && h.shown != nil:
		h.shown = nil
		h.tell(nil)
	case o != nil && (h.shown == nil || !h.shown.Since.Equal(o.Since)):
		h.shown = o
		h.tell(o)
	}
}

func (h *watchHealth) tell(o *Outage) {
	if h.report != nil {
		h.report(o)
	}
}

// probe asks the API server for its version, telling the Reach whether it
// answers.
func (c *Client) probe(ctx context.Context) error {
	return c.typed.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Error()
}

// whileReachable is ctx, ended once the API server has been unreachable
// for longer than the bound (for waits that watch without watchStatus);
// unreachable then says so, and stops the watching. Call it once the wait
// is over.
func (c *Client) whileReachable(ctx context.Context) (context.Context, func() *UnreachableError) {
	wctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	finished := make(chan struct{})
	h := &watchHealth{reach: c.reach, probe: c.probe}
	go func() {
		defer close(finished)
		t := time.NewTicker(healthEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-wctx.Done():
				return
			case <-t.C:
				if err := h.check(wctx); err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	return wctx, func() *UnreachableError {
		close(done)
		<-finished
		defer cancel(nil)
		var ue *UnreachableError
		if errors.As(context.Cause(wctx), &ue) {
			return ue
		}
		return nil
	}
}
