package run_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/run/apply"
)

// blockerSpy is a Progress that passes the first blocker line naming
// Gadget g1 to seen.
type blockerSpy struct {
	apply.NoProgress
	once sync.Once
	seen chan string
}

func (s *blockerSpy) Event(ev release.Event) {
	for _, b := range ev.Blockers {
		if b.Ref.Kind == "Gadget" && b.Ref.Name == "g1" {
			s.once.Do(func() { s.seen <- b.String() })
		}
	}
}

// healthChecked is the gadget release's health_check: current when the
// Gadget's status.phase is Ready, failed when it is Failed.
const healthChecked = `  health_check {
    api_version = "%s/v1alpha1"
    kind        = "Gadget"
    current     = "has(self.status) && self.status.phase == 'Ready'"
    failed      = "has(self.status) && self.status.phase == 'Failed'"
  }`

// applyUntilBlocked runs an apply of e's stack and, once its live view
// names Gadget g1 as not ready, sets g1's status.phase to phase. It
// returns the apply's results and the blocker line seen ("" when the
// apply ended without one).
func applyUntilBlocked(t *testing.T, e *crdEnv, phase string) (*run.Applied, string) {
	t.Helper()
	spy := &blockerSpy{seen: make(chan string, 1)}
	type result struct {
		applied *run.Applied
		err     error
	}
	done := make(chan result, 1)
	go func() {
		applied, err := runApply(context.Background(), e.o, run.ApplyRequest{
			Command:  "convoy apply",
			Progress: func([]apply.Row) apply.Progress { return spy },
		})
		done <- result{applied, err}
	}()
	gadgets := e.dyn.Resource(schema.GroupVersionResource{Group: e.group, Version: "v1alpha1", Resource: "gadgets"}).Namespace(e.ns)
	var line string
	select {
	case line = <-spy.seen:
		patch := `{"status":{"phase":"` + phase + `"}}`
		if _, err := gadgets.Patch(context.Background(), "g1", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatal(err)
		}
	case r := <-done:
		done <- r
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("apply: %v", r.err)
	}
	return r.applied, line
}

// TestHealthCheckWaitsUntilCurrent: a custom resource with a health_check
// is waited on until current holds (kstatus alone takes a resource
// without conditions as ready at once), and the live view says which
// expression it waits for.
func TestHealthCheckWaitsUntilCurrent(t *testing.T) {
	e := newCRDEnv(t)
	gadgetStack(t, e.dir, e.ns, strings.ReplaceAll(healthChecked, "%s", e.group))
	gadgetChart(t, e.dir, gadgetCRD(e.group, alphaOnly...), e.group+"/v1alpha1")
	applied, line := applyUntilBlocked(t, e, "Ready")
	if line == "" {
		t.Fatal("the apply did not wait for Gadget g1")
	}
	if !strings.Contains(line, "health_check current does not hold yet: has(self.status) && self.status.phase == 'Ready' (stack.hcl:12:") {
		t.Errorf("blocker line: %s", line)
	}
	if applied.Failed() {
		t.Fatalf("apply failed: %v", applied.Releases[0].Err)
	}
}

// TestHealthCheckFailsFast: when failed holds the wait fails at once,
// naming the object and the expression, long before the timeout.
func TestHealthCheckFailsFast(t *testing.T) {
	e := newCRDEnv(t)
	gadgetStack(t, e.dir, e.ns, strings.ReplaceAll(healthChecked, "%s", e.group))
	gadgetChart(t, e.dir, gadgetCRD(e.group, alphaOnly...), e.group+"/v1alpha1")
	applied, line := applyUntilBlocked(t, e, "Failed")
	if line == "" {
		t.Fatal("the apply did not wait for Gadget g1")
	}
	if !applied.Failed() {
		t.Fatal("apply succeeded")
	}
	err := applied.Releases[0].Err
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the wait ran to its timeout: %v", err)
	}
	for _, want := range []string{
		e.group + "/v1alpha1 Gadget " + e.ns + "/g1",
		"health_check failed holds: has(self.status) && self.status.phase == 'Failed' (stack.hcl:13:",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}
