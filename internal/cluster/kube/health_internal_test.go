package kube

import (
	"testing"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/event"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// phaseHealth checks Gadgets by status.phase.
type phaseHealth struct{}

func (phaseHealth) Check(u *unstructured.Unstructured) (HealthResult, bool) {
	if u.GetKind() != "Gadget" {
		return HealthResult{}, false
	}
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	return HealthResult{Current: phase == "Ready", Failed: phase == "Failed", Message: "phase " + phase}, true
}

// A kind with a health check is judged by it, not by kstatus (which takes
// a resource without conditions as ready); other kinds as before.
func TestHealthOverridesKstatus(t *testing.T) {
	gadget := func(phase string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": "g1", "namespace": "ns"}}}
		if phase != "" {
			u.Object["status"] = map[string]any{"phase": phase}
		}
		return u
	}
	if !readyAlone(gadget(""), modeReady, nil) {
		t.Fatal("without a check kstatus takes a Gadget without conditions as ready")
	}
	if readyAlone(gadget(""), modeReady, phaseHealth{}) || readyAlone(gadget("Failed"), modeReady, phaseHealth{}) {
		t.Fatal("a Gadget not Ready is ready")
	}
	if !readyAlone(gadget("Ready"), modeReady, phaseHealth{}) {
		t.Fatal("a Ready Gadget is not ready")
	}
	r := statusReader{mode: modeReady, health: phaseHealth{}}
	for phase, want := range map[string]status.Status{"": status.InProgressStatus, "Ready": status.CurrentStatus, "Failed": status.FailedStatus} {
		rs := r.refine(&event.ResourceStatus{Resource: gadget(phase), Status: status.CurrentStatus})
		if rs.Status != want || rs.Message != "phase "+phase {
			t.Errorf("phase %q: %s %q, want %s", phase, rs.Status, rs.Message, want)
		}
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
	if !readyAlone(cm, modeReady, phaseHealth{}) {
		t.Fatal("a ConfigMap is judged by kstatus")
	}
}
