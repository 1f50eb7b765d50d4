package release

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestCopyHistoryThenDelete: a rename's record steps, each done twice
// (an interrupted rename is done again): the copies keep revisions,
// statuses and values, say where they came from, and carry the new
// labels; the old records go.
func TestCopyHistoryThenDelete(t *testing.T) {
	ctx := context.Background()
	s := &Storage{Driver: NewMemory()}
	for _, r := range []*Release{rec("web", 1, StatusSuperseded), rec("web", 2, StatusDeployed)} {
		r.Info.Description = "Upgrade complete"
		r.Labels = map[string]string{StackLabel: "shop", AddressLabel: "release.old", RunLabel: "run-1"}
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{AddressLabel: "release.new"}
	for range 2 {
		if _, err := s.CopyHistory(ctx, "web", "web2", labels); err != nil {
			t.Fatal(err)
		}
	}
	h, err := s.History(ctx, "web2")
	if err != nil {
		t.Fatal(err)
	}
	if got := versions(h); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("copied revisions %v, want [1 2]", got)
	}
	for i, want := range []Status{StatusSuperseded, StatusDeployed} {
		r := h[i]
		if r.Name != "web2" || r.Info.Status != want || r.Config["replicas"] != float64(r.Version) {
			t.Fatalf("revision %d: name %s status %s config %v", r.Version, r.Name, r.Info.Status, r.Config)
		}
		if !strings.HasPrefix(r.Info.Description, "Renamed from web (revision ") || !strings.HasSuffix(r.Info.Description, ": Upgrade complete") {
			t.Fatalf("revision %d description %q", r.Version, r.Info.Description)
		}
		if r.Labels[RenamedFromLabel] != "web" || r.Labels[AddressLabel] != "release.new" || r.Labels[StackLabel] != "shop" || r.Labels[RunLabel] != "" {
			t.Fatalf("revision %d labels %v", r.Version, r.Labels)
		}
	}
	for range 2 {
		if err := s.DeleteHistory(ctx, "web"); err != nil {
			t.Fatal(err)
		}
	}
	if h, _ := s.History(ctx, "web"); len(h) != 0 {
		t.Fatalf("old records remain: %v", versions(h))
	}
}

// TestCopyHistoryRefusesAnotherRelease: records of the new name that are
// not copies are another release's; a rename never overwrites them.
func TestCopyHistoryRefusesAnotherRelease(t *testing.T) {
	ctx := context.Background()
	s := &Storage{Driver: NewMemory()}
	for _, r := range []*Release{rec("web", 1, StatusDeployed), rec("web2", 1, StatusDeployed)} {
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.CopyHistory(ctx, "web", "web2", nil)
	if err == nil || !strings.Contains(err.Error(), "was not copied from release web") {
		t.Fatalf("err = %v", err)
	}
}
