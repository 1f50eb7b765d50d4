package kube

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// dropFirst is a server that closes the connection of the first request it
// reads, without answering, and answers the others.
func dropFirst(t *testing.T, status int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var seen atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if seen.Add(1) == 1 {
			if status != 0 {
				w.WriteHeader(status)
				return
			}
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		_, _ = io.WriteString(w, "{}")
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func reachClient(srv string, bound time.Duration) (*http.Client, *Reach) {
	return reachClientVia(http.DefaultTransport.(*http.Transport).Clone(), srv, bound)
}

// reachClientVia is reachClient over next, with a backoff of a few
// milliseconds: what is tested is how often a request is sent, not the
// backoff's durations.
func reachClientVia(next *http.Transport, srv string, bound time.Duration) (*http.Client, *Reach) {
	r := NewReach(&rest.Config{Host: srv}, bound)
	return &http.Client{Transport: &reachTransport{next: next, reach: r, delay: time.Millisecond, maxDelay: 10 * time.Millisecond}}, r
}

func TestTransportRetriesWhatIsSafeToSendAgain(t *testing.T) {
	for _, tc := range []struct {
		name        string
		method      string
		contentType string
		status      int // first answer (0: the connection is dropped)
		want        int // requests the server reads
		wantErr     bool
	}{
		{name: "a read after a dropped connection", method: http.MethodGet, want: 2},
		{name: "a server-side apply after a dropped connection", method: http.MethodPatch, contentType: "application/apply-patch+yaml", want: 2},
		{name: "a server-side apply after the server's timeout", method: http.MethodPatch, contentType: "application/apply-patch+yaml", status: http.StatusGatewayTimeout, want: 2},
		{name: "a create that may have arrived", method: http.MethodPost, contentType: "application/json", want: 1, wantErr: true},
		{name: "a merge patch that may have arrived", method: http.MethodPatch, contentType: "application/merge-patch+json", want: 1, wantErr: true},
		{name: "a watch, left to its informer", method: http.MethodGet, want: 1, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, seen := dropFirst(t, tc.status)
			c, reach := reachClient(srv.URL, time.Minute)
			url := srv.URL + "/api/v1/namespaces/ns/configmaps/cm"
			if strings.HasPrefix(tc.name, "a watch") {
				url += "?watch=true"
			}
			req, err := http.NewRequest(tc.method, url, strings.NewReader(`{"kind":"ConfigMap"}`))
			if tc.method == http.MethodGet {
				req, err = http.NewRequest(tc.method, url, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", tc.contentType)
			// One connection each: net/http's own retry of idempotent
			// requests on a reused connection is not what is tested.
			req.Close = true
			resp, err := c.Do(req)
			if resp != nil {
				_ = resp.Body.Close()
			}
			if (err != nil) != tc.wantErr || seen.Load() != int64(tc.want) {
				t.Fatalf("err %v, %d requests read; want error %v, %d", err, seen.Load(), tc.wantErr, tc.want)
			}
			if err == nil && reach.Down() != nil {
				t.Fatalf("answered, yet down: %v", reach.Down())
			}
			if err != nil && reach.Down() == nil {
				t.Fatal("no answer, yet not down")
			}
		})
	}
}

func TestTransportGivesUpOnAServerUnreachableLongerThanTheBound(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // refused from now on
	c, reach := reachClient("http://"+addr, 300*time.Millisecond)

	// A create never sent is sent again, until the bound.
	_, err = c.Post("http://"+addr+"/api/v1/namespaces", "application/json", strings.NewReader("{}"))
	var ue *UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "API server http://"+addr+" unreachable since ") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("want the API server named unreachable, got %v", err)
	}
	if reach.Down() == nil {
		t.Fatal("not down")
	}
}

// refusedFirst is a transport whose first n connections are refused (each
// dials a closed port): an API server restarting, its port closed.
func refusedFirst(t *testing.T, n int64) (*http.Transport, *atomic.Int64) {
	var dials atomic.Int64
	return refusing(t, func() bool { return dials.Add(1) <= n }), &dials
}

// refusing is a transport that dials a closed port while refuse says so.
func refusing(t *testing.T, refuse func() bool) *http.Transport {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if refuse() {
			addr = closed
		}
		return d.DialContext(ctx, network, addr)
	}
	return tr
}

// A request that is safe to send again is sent again for as long as the
// server stays unreachable within the bound, however many attempts that
// takes (issue 54: not 4 over 3.75 s): one that was never sent (its
// connections refused) of any verb, a read or a server-side apply whose
// connection was lost. Each ends with the server's answer.
func TestTransportRetriesThroughAnOutageWithinTheBound(t *testing.T) {
	const outage = 12 // attempts that fail; the bound allows them all
	for _, tc := range []struct {
		name        string
		method      string
		contentType string
		refused     bool // connections refused; else dropped under the request
	}{
		{name: "a read, refused", method: http.MethodGet, refused: true},
		{name: "a server-side apply, refused", method: http.MethodPatch, contentType: "application/apply-patch+yaml", refused: true},
		{name: "a create, refused", method: http.MethodPost, contentType: "application/json", refused: true},
		{name: "a read, dropped", method: http.MethodGet},
		{name: "a server-side apply, dropped", method: http.MethodPatch, contentType: "application/apply-patch+yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if n := seen.Add(1); !tc.refused && n <= outage {
					if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
						_ = conn.Close()
					}
					return
				}
				_, _ = io.WriteString(w, "{}")
			}))
			t.Cleanup(srv.Close)
			next, dials := http.DefaultTransport.(*http.Transport).Clone(), &atomic.Int64{}
			if tc.refused {
				next, dials = refusedFirst(t, outage)
			}
			c, reach := reachClientVia(next, srv.URL, time.Minute)
			var body io.Reader
			if tc.method != http.MethodGet {
				body = strings.NewReader(`{"kind":"ConfigMap"}`)
			}
			req, err := http.NewRequest(tc.method, srv.URL+"/api/v1/namespaces/ns/configmaps/cm", body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", tc.contentType)
			req.Close = true // a connection each, as after a restart
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("%d connections refused, %d requests read: %v", dials.Load(), seen.Load(), err)
			}
			_ = resp.Body.Close()
			want := int64(outage + 1)
			if tc.refused {
				want = 1
			}
			if resp.StatusCode != http.StatusOK || seen.Load() != want {
				t.Fatalf("status %d, %d requests read; want 200, %d", resp.StatusCode, seen.Load(), want)
			}
			if reach.Down() != nil {
				t.Fatalf("answered, yet down: %v", reach.Down())
			}
		})
	}
}

// A server that has never answered (a wrong address, a cluster dead before
// the run) is given up on within seconds whatever the bound; one that has
// answered is waited for up to the bound, past those seconds.
func TestTransportGivesUpSoonOnAServerThatNeverAnswered(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	c, reach := reachClient("http://"+addr, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/version", nil)
	_, err = c.Do(req)
	var ue *UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("a server that never answered, bound 1h: want it given up on as unreachable within %s, got %v", neverAnsweredBound, err)
	}
	if got := reach.Bound(); got != neverAnsweredBound {
		t.Fatalf("Bound() = %s while the server never answered, want %s (what the give-up time announced uses)", got, neverAnsweredBound)
	}
}

func TestTransportWaitsLongerForAServerThatAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("rides through an outage longer than neverAnsweredBound")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "{}") }))
	t.Cleanup(srv.Close)
	// Refused from the first request on until the outage ends.
	var outageEnds atomic.Int64
	tr := refusing(t, func() bool {
		end := outageEnds.Load()
		return end != 0 && time.Now().UnixNano() < end
	})
	c, reach := reachClientVia(tr, srv.URL, time.Minute)
	get := func() error {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/version", nil)
		req.Close = true
		resp, err := c.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatal(err)
	}
	outageEnds.Store(time.Now().Add(neverAnsweredBound + 2*time.Second).UnixNano())
	if err := get(); err != nil {
		t.Fatalf("an outage of %s, bound 1m, of a server that had answered: %v", neverAnsweredBound+2*time.Second, err)
	}
	if reach.Bound() != time.Minute {
		t.Fatalf("Bound() = %s after an answer, want 1m", reach.Bound())
	}
}
