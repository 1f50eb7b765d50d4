package controller_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The health endpoints answer, and the metrics count reconciles, time
// them, and count releases by status.
func TestMetricsAndHealth(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", nil))
	metrics, health := freeAddr(t), freeAddr(t)
	startController(t, ns, func(o *controller.Options) { o.MetricsAddress, o.HealthAddress = metrics, health })
	waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, ""))
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, "http://"+health+path); code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, code, body)
		}
	}
	_, body := get(t, "http://"+metrics+"/metrics")
	for _, want := range []string{
		`convoy_controller_reconciles_total{result="applied"}`,
		`convoy_controller_reconcile_duration_seconds_count{phase="plan"}`,
		`convoy_controller_reconcile_duration_seconds_count{phase="apply"}`,
		`convoy_controller_releases{status="deployed"} 2`,
		`controller_runtime_reconcile_total{controller="stack"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		fmt.Println(body)
	}
}

// --cluster-qps: the Stacks' runs spend one budget per cluster, and the
// requests that waited for it are counted.
func TestClusterQPSBudget(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", nil))
	metrics := freeAddr(t)
	startController(t, ns, func(o *controller.Options) {
		o.MetricsAddress = metrics
		o.ClusterQPS, o.ClusterBurst = 20, 1
	})
	waitStack(t, c, ns, "shop", 90*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, ""))
	_, body := get(t, "http://"+metrics+"/metrics")
	var waits float64
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, "convoy_controller_cluster_budget_waits_total "); ok {
			fmt.Sscanf(v, "%g", &waits)
		}
	}
	if waits < 1 {
		t.Fatalf("no request waited for a budget of 20 per second with a burst of 1:\n%s", body)
	}
	t.Logf("%g requests waited for the budget", waits)
}
