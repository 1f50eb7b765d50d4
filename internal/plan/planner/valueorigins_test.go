package planner_test

import (
	"fmt"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
)

// A release rendered at plan time carries where each values leaf was set
// (the other inputs' sources are internal/stack/provenance's tests).
func TestPlanCarriesValueOrigins(t *testing.T) {
	m := newMem(t, fmt.Sprintf(`stack "shop" {
  default_namespace = "shop"
}
variable "message" {
  type = string
}
release "app" {
  chart  = %[1]q
  values = [{ message = var.message }]
}
`, appChart(t)))
	check := func(p *plan.Plan) {
		t.Helper()
		rc := p.Release("release.app")
		msg, ok := rc.ValueOrigins["message"]
		if !ok {
			t.Fatalf("%s: no origin of message in %d origins", rc.Action, len(rc.ValueOrigins))
		}
		if msg.Kind != plan.OriginValues || msg.Source == nil || msg.Source.File != "stack.hcl" || msg.Source.Line != 9 || msg.Source.Column != 15 {
			t.Errorf("message: %+v %+v", msg, msg.Source)
		}
		if len(msg.Via) != 1 || msg.Via[0].Input != "var.message" || len(msg.Via[0].Via) != 1 || msg.Via[0].Via[0].Kind != plan.OriginFlag {
			t.Errorf("message read %+v", msg.Via)
		}
		if len(msg.Overrode) != 1 || msg.Overrode[0].Kind != plan.OriginChartDefault || msg.Overrode[0].Source.Line != 2 {
			t.Errorf("message overrode %+v", msg.Overrode)
		}
		if r, ok := rc.ValueOrigins["replicas"]; !ok || r.Kind != plan.OriginChartDefault || r.Source.Line != 1 {
			t.Errorf("replicas: %+v", r)
		}
	}
	m.vars = map[string]string{"message": "v1"}
	check(m.mustPlan(nil, planner.ObserveContent))
	m.deploy()
	m.vars = map[string]string{"message": "v2"}
	p := m.mustPlan(nil, planner.ObserveContent)
	if rc := p.Release("release.app"); rc.Action != plan.ActionUpgrade {
		t.Fatalf("%s, want an upgrade (rendered)", rc.Action)
	}
	check(p)
}
