package kube_test

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
)

// A wait names what blocks it while it waits, well before its timeout.
func TestWaitReportsBlockersBeforeTheTimeout(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	c := newClient(t)
	objs := parse(t, c, ns, configMap("a: b")+"---"+deployment("web", 2, neverReady))
	if _, err := c.Apply(testContext(t, 30*time.Second), objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var first []kube.ObjectStatus
	var at time.Duration
	start := time.Now()
	_ = c.Wait(testContext(t, 12*time.Second), refs(objs), kube.WaitOptions{
		BlockersAfter: time.Second,
		Blockers: func(objs []kube.ObjectStatus) {
			mu.Lock()
			defer mu.Unlock()
			for _, o := range objs {
				if first == nil && strings.Contains(o.String(), "ContainersNotReady") {
					first, at = objs, time.Since(start)
				}
			}
		},
	})
	mu.Lock()
	defer mu.Unlock()
	if first == nil || at > 10*time.Second {
		t.Fatalf("no blocker naming ContainersNotReady within 10s (got %v after %s)", first, at)
	}
	line := regexp.MustCompile(`^apps/v1 Deployment ` + ns + `/web: not ready: 0/2 replicas available; pod web-[a-z0-9-]+: container web: not ready \(ContainersNotReady\)`)
	if len(first) != 1 || !line.MatchString(first[0].String()) {
		t.Fatalf("blockers after %s: %v", at, first)
	}
}
