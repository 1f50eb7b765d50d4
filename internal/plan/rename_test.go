package plan

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/stack/addrs"
)

// TestRenameObjects: an object rendered under the same identity keeps it;
// one named after the old release is replaced by its namesake under the
// new name; one the new release lacks is deleted.
func TestRenameObjects(t *testing.T) {
	dep := ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	cm := ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web-settings"}
	cm2 := ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web2-settings"}
	job := ObjectRef{Group: "batch", Version: "v1", Kind: "Job", Namespace: "shop", Name: "web-once"}
	got := RenameObjects("web", "web2", []ObjectRef{dep, cm, job}, []ObjectRef{dep, cm2})
	if len(got) != 3 || !got[0].Kept || got[1].Kept || got[1].ReplacedBy == nil || *got[1].ReplacedBy != cm2 || got[2].Kept || got[2].ReplacedBy != nil {
		t.Fatalf("RenameObjects = %+v", got)
	}
	lines := (&Rename{Objects: got}).ObjectLines()
	for i, want := range []string{"apps/v1 Deployment shop/web keeps its identity", "v1 ConfigMap shop/web-settings is replaced by v1 ConfigMap shop/web2-settings", "batch/v1 Job shop/web-once is deleted"} {
		if !strings.Contains(lines[i], want) {
			t.Fatalf("line %d = %q, want %q", i, lines[i], want)
		}
	}
}

// TestRenameLineAndSummary: the plan names both addresses and names, how
// far an interrupted rename got, and counts renames apart from moves; a
// rename whose revision is deployed already still has something to do.
func TestRenameLineAndSummary(t *testing.T) {
	from := addrs.ReleaseInstance{Release: addrs.Release{Name: "old"}}
	rc := &ReleaseChange{Addr: InstanceAddr(addrs.ReleaseInstance{Release: addrs.Release{Name: "new"}}), MovedFrom: &from, Name: "web2", Action: ActionNoOp,
		Rename: &Rename{From: "web", State: RenameDeployed, ToRevision: 2, ToStatus: "deployed", Revisions: 1}}
	want := "release.old (web) will be renamed to release.new (web2); rename of web interrupted: revision 2 (deployed) written under the new name, old records remain"
	if got := rc.RenameLine(); got != want {
		t.Fatalf("RenameLine = %q\nwant %q", got, want)
	}
	p := &Plan{Releases: []*ReleaseChange{rc}}
	if !p.HasChanges() {
		t.Fatal("a rename left with its old records has no changes")
	}
	if s := p.Summary(); s.Renamed != 1 || s.Moved != 0 || !strings.Contains(s.String(), "Renamed: 1.") {
		t.Fatalf("summary %+v: %s", s, s)
	}
}
