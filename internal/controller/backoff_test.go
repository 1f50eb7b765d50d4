package controller_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var errorReconciles = regexp.MustCompile(`(?m)^convoy_controller_reconciles_total\{result="error"\} (\d+)`)

// A source that fails for a while (a tag not pushed yet) is looked at
// again at least every interval, however long it has failed: the error
// backoff is capped at spec.interval.
func TestFailingSourceRetriedEveryInterval(t *testing.T) {
	if testing.Short() {
		t.Skip("lets the error backoff grow for 20s")
	}
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", nil)) // interval 2s
	metrics := freeAddr(t)
	startController(t, ns, func(o *controller.Options) { o.MetricsAddress = metrics })
	waitStack(t, c, ns, "shop", 60*time.Second, "SourceFailed", isCond("Ready", metav1.ConditionFalse, "SourceFailed"))
	failures := func() int {
		_, body := get(t, "http://"+metrics+"/metrics")
		m := errorReconciles.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("/metrics counts no failed reconcile:\n%s", body)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	// Uncapped, controller-runtime's backoff (5ms, doubling) would wait
	// 10s, then 20s, … after 20s of failures.
	time.Sleep(20 * time.Second)
	// Capped, four more failures come within about 8s; uncapped, at most
	// two come in the next 30s.
	before, start := failures(), time.Now()
	for n := 0; n < 4; n = failures() - before {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("%d failed reconciles in 30s with an interval of 2s: the backoff is not capped at the interval", n)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("4 failed reconciles in %s, after 20s of failures", time.Since(start).Round(time.Second))
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	waitStack(t, c, ns, "shop", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
}
