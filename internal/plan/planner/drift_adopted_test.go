package planner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan/planner"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A drifted field that apply leaves as it is says why: the chart reads the
// live value back through lookup (a kept password) and sets it again, or
// the new revision no longer sets the field.
func TestDriftApplyLeavesSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name, field, newLabel, note string
	}{
		{"read back", "password", "a", "the revision being applied sets these fields to their live values"},
		{"no longer set", "label", "", "the revision being applied no longer sets these fields: they keep their live values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMem(t, fmt.Sprintf(`
variable "label" {
  default = "a"
}
stack "shop" {
  default_namespace = "shop"
}
release "db" {
  chart  = %[1]q
  values = [{ label = var.label }]
}
`, chartPath(t, "testdata", "charts", "kept-secret")))
			m.deploy()
			if err := m.v.Edit(context.Background(), ref("", "v1", "Secret", "shop", "db-auth"), func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "Y2hhbmdlZA==", "data", tc.field)
			}); err != nil {
				t.Fatal(err)
			}
			m.vars = map[string]string{"label": tc.newLabel}
			p := m.mustPlan(nil, planner.ObserveContent)
			db := p.Release("release.db")
			if len(db.Drift) != 1 || db.Drift[0].Corrected {
				t.Fatalf("drift: %+v", db.Drift)
			}
			if text, _, _ := render(t, p); !strings.Contains(text, "apply does not restore it: "+tc.note+"\n") {
				t.Fatalf("text:\n%s", text)
			}
			m.deploy()
			if p := m.mustPlan(nil, planner.ObserveContent); p.HasChanges() {
				text, _, _ := render(t, p)
				t.Fatalf("the plan after the apply is not clean:\n%s", text)
			}
		})
	}
}
