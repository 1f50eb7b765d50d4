package planner_test

import (
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/apimap"
	"github.com/convoy-sh/convoy/internal/plan/planner"
)

// A target Kubernetes release past the newest one convoy's table of
// removals knows is said to be (plan.ReleaseChange.KubeKnown); the
// cluster's own release (1.36) and earlier targets are not.
func TestMemKubeTargetPastTheTable(t *testing.T) {
	known := apimap.Kubernetes().KnownThrough()
	later := apimap.Version{Major: known.Major, Minor: known.Minor + 1}
	for _, tt := range []struct {
		target apimap.Version
		want   string
	}{
		{apimap.Version{}, ""}, // the cluster's: plannertest's 1.36
		{known, ""},
		{later, known.String()},
		{apimap.Version{Major: 2}, known.String()},
	} {
		m := newMem(t, webStack(t, `{ message = "a" }`))
		m.in = func(in *planner.Input) { in.KubeVersion = tt.target }
		rc := change(t, m.mustPlan(nil, planner.ObserveMetadata), "release.web")
		if rc.KubeKnown != tt.want {
			t.Errorf("target %q (plan's %s): KubeKnown %q, want %q", tt.target, rc.KubeTarget, rc.KubeKnown, tt.want)
		}
	}
}
