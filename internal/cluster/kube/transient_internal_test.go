package kube

import (
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
	r := NewReach(&rest.Config{Host: srv}, bound)
	return &http.Client{Transport: &reachTransport{next: http.DefaultTransport.(*http.Transport).Clone(), reach: r}}, r
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
