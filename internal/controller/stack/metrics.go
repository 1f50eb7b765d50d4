package stack

import (
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// metrics are the controller's Prometheus series, on controller-runtime's
// registry (served at the metrics address with its own series).
type metrics struct {
	reconciles *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	releases   *prometheus.GaugeVec
	// budgetWaits counts requests that waited for --cluster-qps.
	budgetWaits prometheus.Counter
	// evictions counts cache entries removed for --cache-max-size.
	evictions prometheus.Counter
	// chartChecks counts requests that proved a Stack's credentials may
	// read a cached chart (source.Access).
	chartChecks prometheus.Counter
	// kubeRequests counts the Stacks' requests to their clusters by verb.
	kubeRequests *prometheus.CounterVec
	// connections counts the cluster connections the Stacks' runs made
	// (each reads discovery); kept ones are reused.
	connections prometheus.Counter
	// webhookReceipts counts the push receiver's notifications by
	// result.
	webhookReceipts *prometheus.CounterVec

	mu sync.Mutex
	// byStack are the release statuses of each Stack (namespace/name),
	// summed into releases.
	byStack map[string]map[string]int
}

func newMetrics() *metrics {
	m := &metrics{
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "convoy_controller_reconciles_total",
			Help: "Stack reconciles by result (uptodate, applied, approval_required, drifted, locked, stale, error, suspended, idle).",
		}, []string{"result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "convoy_controller_reconcile_duration_seconds",
			Help:    "Time spent per reconcile phase (fetch, plan, apply, total).",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"phase"}),
		releases: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "convoy_controller_releases",
			Help: "Releases of the reconciled Stacks by status (deployed, failed, …).",
		}, []string{"status"}),
		byStack: map[string]map[string]int{},
	}
	m.reconciles = register(m.reconciles)
	m.duration = register(m.duration)
	m.releases = register(m.releases)
	m.budgetWaits = register(prometheus.NewCounter(prometheus.CounterOpts{
		Name: "convoy_controller_cluster_budget_waits_total",
		Help: "Requests of Stack runs that waited for the per-cluster budget (--cluster-qps).",
	}))
	m.evictions = register(prometheus.NewCounter(prometheus.CounterOpts{
		Name: "convoy_controller_cache_evictions_total",
		Help: "Pulled stacks and chart archives removed from the cache for --cache-max-size.",
	}))
	m.chartChecks = register(prometheus.NewCounter(prometheus.CounterOpts{
		Name: "convoy_controller_chart_access_checks_total",
		Help: "Checks sent to chart repositories to prove a Stack's credentials may read a chart the cache holds (one per namespace, credentials and digest per hour).",
	}))
	m.kubeRequests = register(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "convoy_controller_kube_requests_total",
		Help: "Requests of the Stacks' runs to their clusters by verb (get, list, watch, patch, discovery, post, put, delete).",
	}, []string{"verb"}))
	register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "convoy_controller_stack_evaluations_total",
		Help: "Stack evaluations of the process (a reconcile evaluates its stack once; a pipeline's gates evaluate theirs).",
	}, func() float64 { return float64(config.ReadCounts().Evaluations) }))
	register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "convoy_controller_sops_decryptions_total",
		Help: "SOPS files the process's stack evaluations decrypted (each once per evaluation).",
	}, func() float64 { return float64(config.ReadCounts().Decryptions) }))
	m.connections = register(prometheus.NewCounter(prometheus.CounterOpts{
		Name: "convoy_controller_cluster_connections_total",
		Help: "Cluster connections the Stacks' runs made (each reads the cluster's discovery); runs reuse kept ones.",
	}))
	m.webhookReceipts = register(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "convoy_controller_webhook_receipts_total",
		Help: "Registry notifications the push receiver (--webhook-listen) took, by result (accepted, unmatched, ignored, unauthorized, invalid, unavailable).",
	}, []string{"result"}))
	return m
}

// register registers c, or returns the collector registered before under
// the same name (a second controller in one process, as in tests).
func register[C prometheus.Collector](c C) C {
	err := ctrlmetrics.Registry.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if prev, ok := are.ExistingCollector.(C); ok {
			return prev
		}
	}
	return c
}

// setReleases records a Stack's release statuses (nil: the Stack is gone).
func (m *metrics) setReleases(stack string, statuses map[string]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.byStack[stack]
	if statuses == nil {
		delete(m.byStack, stack)
	} else {
		m.byStack[stack] = statuses
	}
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range statuses {
		keys[k] = true
	}
	for _, status := range slices.Sorted(maps.Keys(keys)) {
		total := 0
		for _, s := range m.byStack {
			total += s[status]
		}
		m.releases.WithLabelValues(status).Set(float64(total))
	}
}
