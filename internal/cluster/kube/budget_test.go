package kube

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// Clients of one cluster share its budget, whichever configuration they
// were built from; another cluster has its own.
func TestBudgetIsSharedPerCluster(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	b := &Budget{QPS: 20, Burst: 1}
	if b.Limiter(ClusterIDOf(&rest.Config{Host: srv.URL})) != b.Limiter(ClusterIDOf(&rest.Config{Host: srv.URL + "/"})) {
		t.Fatal("two configurations of one API server have two budgets")
	}
	if b.Limiter("https://a.example") == b.Limiter("https://b.example") {
		t.Fatal("two clusters share a budget")
	}

	var clients []*http.Client
	for range 2 {
		cfg := &rest.Config{Host: srv.URL}
		b.Wrap(cfg)
		c, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	start := time.Now()
	for i := range 11 {
		resp, err := clients[i%2].Get(srv.URL + "/api")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// 11 requests at 20 per second with a burst of 1 take 500ms at least,
	// only if the two clients draw from one bucket (each its own: 250ms).
	if d := time.Since(start); d < 450*time.Millisecond {
		t.Fatalf("11 requests in %s, %d waited: the clients do not share the budget", d, b.Waits.Load())
	}
}

func TestBudgetZeroIsUnlimited(t *testing.T) {
	cfg := &rest.Config{Host: "https://a.example"}
	(&Budget{}).Wrap(cfg)
	var nilBudget *Budget
	nilBudget.Wrap(cfg)
	if cfg.WrapTransport != nil {
		t.Fatal("a zero budget wrapped the transport")
	}
}
