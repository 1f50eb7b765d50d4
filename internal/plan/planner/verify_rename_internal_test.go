package planner

import (
	"errors"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
)

// TestVerifyRename: a saved plan of a rename is checked against
// the old release's records and the new name's own, not against the
// history the plan expects once the copy is made.
func TestVerifyRename(t *testing.T) {
	renamed := func() *plan.Plan {
		rc := &plan.ReleaseChange{Name: "web2", Namespace: "shop", Action: plan.ActionUpgrade,
			Observed: plan.Observed{LastRevision: 1, LastStatus: "deployed"},
			Rename:   &plan.Rename{From: "web", FromRevision: 1, FromStatus: "deployed", State: plan.RenameNotStarted, Revisions: 1}}
		return &plan.Plan{Releases: []*plan.ReleaseChange{rc}}
	}
	cases := []struct {
		name    string
		records map[string][]*release.Release
		stale   string
	}{
		{"as planned", map[string][]*release.Release{"web": {record("web", 1, release.StatusDeployed)}}, ""},
		{"old release upgraded since", map[string][]*release.Release{"web": {record("web", 1, release.StatusSuperseded), record("web", 2, release.StatusDeployed)}},
			"release web (namespace shop) has a new revision 2"},
		{"new name installed since", map[string][]*release.Release{"web": {record("web", 1, release.StatusDeployed)}, "web2": {record("web2", 1, release.StatusDeployed)}},
			"release web2 (namespace shop) was installed since the plan"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeCluster{records: map[string]map[string][]*release.Release{"shop": tc.records}}
			err := f.verify(t, renamed())
			var se *staleError
			switch {
			case tc.stale == "" && err != nil:
				t.Fatalf("stale: %v", err)
			case tc.stale != "" && (!errors.As(err, &se) || !strings.Contains(err.Error(), tc.stale)):
				t.Fatalf("err = %v, want %q", err, tc.stale)
			}
		})
	}
}
