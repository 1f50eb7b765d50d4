package planner

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
)

func TestPointerAtResolvesChangePaths(t *testing.T) {
	live := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"deployment.kubernetes.io/revision": "2"}},
		"spec": map[string]any{
			"replicas": int64(4),
			"ports":    []any{int64(80), int64(443)},
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "sidecar", "image": "s:1"},
				map[string]any{"name": "web", "image": "w:2"},
			}}},
		},
	}
	// Paths as Compare writes them.
	d := plan.Compare(map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"deployment.kubernetes.io/revision": "1"}},
		"spec": map[string]any{
			"replicas": int64(1),
			"ports":    []any{int64(80), int64(8443)},
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "image": "w:1"},
				map[string]any{"name": "sidecar", "image": "s:1"},
			}}},
		},
	}, live)
	var got []string
	for _, c := range d.Changes {
		p, ok := pointerAt(c.Path, live)
		if !ok {
			t.Fatalf("%s: not resolved", c.Path)
		}
		got = append(got, c.Path+" "+p.String())
	}
	want := []string{
		`metadata.annotations["deployment.kubernetes.io/revision"] /metadata/annotations/deployment.kubernetes.io~1revision`,
		`spec.ports[1] /spec/ports/1`,
		`spec.replicas /spec/replicas`,
		`spec.template.spec.containers[name=web].image /spec/template/spec/containers/1/image`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []string{"spec.missing", "spec.template.spec.containers[name=db].image", "spec.ports[7]", `data["x"]`} {
		if p, ok := pointerAt(bad, live); ok {
			t.Errorf("%s resolved to %s", bad, p)
		}
	}
}

// The race behind flaky drift: the dry run sees a controller's annotation
// (or status, or a default) that the live object read a moment earlier did
// not have, or the reverse. Only the fields the applied object sets count.
func TestProjectSetKeepsOnlyTheAppliedFields(t *testing.T) {
	applied := map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}}, "spec": map[string]any{"replicas": int64(2), "paused": false}}
	dryRun := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "web"}, "annotations": map[string]any{"deployment.kubernetes.io/revision": "4"}},
		"spec":     map[string]any{"replicas": int64(2), "paused": false, "progressDeadlineSeconds": int64(600)},
		"status":   map[string]any{"replicas": int64(2)},
	}
	live := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "web", "example.com/scanned": "yes"}},
		"spec":     map[string]any{"replicas": int64(2), "progressDeadlineSeconds": int64(300)},
	}
	d := plan.Compare(projectSet(dryRun, applied), projectSet(live, applied))
	if d == nil || len(d.Changes) != 1 || d.Changes[0].Path != "spec.paused" || d.Changes[0].Op != plan.FieldRemove {
		t.Fatalf("drift %+v, want only spec.paused removed", d)
	}
}
