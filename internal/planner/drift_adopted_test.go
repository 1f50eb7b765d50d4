package planner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
			ns := cluster.Namespace(t)
			e := newEnv(t, fmt.Sprintf(`
variable "label" {
  default = "a"
}
stack %[1]q {
  default_namespace = %[1]q
}
release "db" {
  chart  = %[2]q
  values = [{ label = var.label }]
}
`, ns, chartPath(t, "testdata", "charts", "kept-secret")))
			e.deploy(nil)
			patch := fmt.Appendf(nil, `{"data":{%q:"Y2hhbmdlZA=="}}`, tc.field)
			if _, err := cluster.Client().CoreV1().Secrets(ns).Patch(context.Background(), "db-auth", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{"label": tc.newLabel}
			p := e.mustPlan(vars)
			db := p.Release("release.db")
			if len(db.Drift) != 1 || db.Drift[0].Corrected {
				t.Fatalf("drift: %+v", db.Drift)
			}
			if text, _, _ := render(t, p); !strings.Contains(text, "apply does not restore it: "+tc.note+"\n") {
				t.Fatalf("text:\n%s", text)
			}
			e.deploy(vars)
			if p := e.mustPlan(vars); p.HasChanges() {
				text, _, _ := render(t, p)
				t.Fatalf("the plan after the apply is not clean:\n%s", text)
			}
		})
	}
}
