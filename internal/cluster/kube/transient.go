package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// Transient failures are retried where every request of a cluster's clients
// goes through: the transport. There the failure is still what the
// connection said (refused, reset, lost, a handshake timeout), before
// client-go turns it into an error text, and one wrapper covers the
// object clients, the records' clients, discovery, the lock and the
// informers' lists alike. What the transport cannot know is whether a write
// is idempotent beyond its verb, so it retries only what is safe to send
// twice whatever happened to the first attempt:
//
//   - reads (GET, HEAD) and server-side applies (a PATCH of
//     application/apply-patch+*): sending them again converges on the same
//     state, after any failure and after the server's own "Timeout: request
//     did not complete" (504);
//   - any request the server cannot have received: the connection was
//     never made (refused, a TLS handshake that timed out).
//
// Such a request is sent again, with backoff, for as long as the Reach
// allows: until the server answers, or until it has been unreachable for
// longer than the Reach's bound (--unreachable-timeout), when it fails as
// an *UnreachableError that names the server. An outage shorter than the
// bound (an API server restarting) is ridden through, whichever request
// falls inside it; a server given up on is given up on by every request.
// The server's own 504 is an answer, not an outage: it is sent again a few
// times only.
//
// A create, an update or a delete that may have reached the server is not
// sent again here: whether it applied is for its caller to find out (the
// release records' writes are retried by release.Retry, which reads before
// it writes again). Watches are left to their informers, which re-list.
const (
	// gatewayRetries is how often a request the server answered with 504
	// is sent again.
	gatewayRetries = 4
	transientDelay = 250 * time.Millisecond
	// maxTransientDelay caps the backoff, so that a server that is back
	// is seen within a couple of seconds.
	maxTransientDelay = 2 * time.Second
)

// Wrap makes every client built from cfg tell r whether the API server
// answers, retry transient failures as above, and give up at once on a
// server unreachable for longer than r's bound (*UnreachableError).
func (r *Reach) Wrap(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &reachTransport{next: rt, reach: r, delay: transientDelay, maxDelay: maxTransientDelay}
	})
}

type reachTransport struct {
	next  http.RoundTripper
	reach *Reach
	// delay is the first backoff between attempts, doubled up to maxDelay.
	delay, maxDelay time.Duration
}

// requestKind is what a request allows of a retry.
type requestKind int

const (
	kindWrite requestKind = iota // retried only when never sent
	kindIdempotent
	kindWatch // never retried: its informer re-lists
)

func kindOfRequest(req *http.Request) requestKind {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		if req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1" {
			return kindWatch
		}
		return kindIdempotent
	case http.MethodPatch:
		if strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch") {
			return kindIdempotent
		}
	}
	return kindWrite
}

func (t *reachTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	kind := kindOfRequest(req)
	ctx := req.Context()
	delay := t.delay
	for timeouts := 0; ; {
		if o := t.reach.failFast(time.Now()); o != nil {
			return nil, &UnreachableError{Outage: *o}
		}
		resp, err := t.roundTrip(req, kind)
		if err == nil {
			t.reach.answered()
			if resp.StatusCode != http.StatusGatewayTimeout || kind != kindIdempotent || timeouts == gatewayRetries || !rewindable(req) {
				return resp, nil
			}
			// The server's "request did not complete": send it again.
			timeouts++
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
		} else {
			if ctx.Err() != nil {
				return nil, err // cancelled by the caller, not the server's doing
			}
			t.reach.failed(err)
			if o := t.reach.givenUp(time.Now()); o != nil {
				return nil, &UnreachableError{Outage: *o}
			}
			if !rewindable(req) || !(kind == kindIdempotent || (kind == kindWrite && neverSent(err))) {
				return nil, err
			}
		}
		// Not past the bound: the next attempt may be the first the
		// server answers, or the one that finds the bound passed.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, t.maxDelay)
		if req, err = rewound(req); err != nil {
			return nil, err
		}
	}
}

// roundTrip sends req once; while the server is down, a request that is
// not a watch is bounded (Reach.requestBound), and one it cut short counts
// as a failure of the server.
func (t *reachTransport) roundTrip(req *http.Request, kind requestKind) (*http.Response, error) {
	bound := t.reach.requestBound()
	if bound == 0 || kind == kindWatch {
		return t.next.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeoutCause(req.Context(), bound, errNoAnswer)
	sent := time.Now()
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		if req.Context().Err() == nil && errors.Is(context.Cause(ctx), errNoAnswer) {
			t.reach.timedOut(sent, fmt.Errorf("no answer within %s", bound))
			return nil, fmt.Errorf("%w (%s)", errNoAnswer, bound)
		}
		return nil, err
	}
	// The body is read after RoundTrip returns: cancel once it is closed.
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// errNoAnswer is a request cut short while its server is down.
var errNoAnswer = errors.New("the API server did not answer")

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// rewindable: the request has no body, or one it can send again.
func rewindable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// rewound is a copy of req to send again, with its body from the start.
func rewound(req *http.Request) (*http.Request, error) {
	again := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		again.Body = body
	}
	return again, nil
}

// neverSent reports whether err shows the request never reached the
// server: no connection was made.
func neverSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	// net/http's handshake timeout has no exported type.
	return strings.Contains(err.Error(), "TLS handshake timeout")
}
