package release

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
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

// TestCopiesOf: the copies of an interrupted rename are the old release's
// (also when only some are made, or some old records are deleted); a
// release installed under the old name later is not.
func TestCopiesOf(t *testing.T) {
	ctx := context.Background()
	s := &Storage{Driver: NewMemory()}
	for _, r := range []*Release{rec("web", 1, StatusSuperseded), rec("web", 2, StatusDeployed)} {
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CopyHistory(ctx, "web", "web2", nil); err != nil {
		t.Fatal(err)
	}
	check := func(want bool, what string) {
		t.Helper()
		got, err := s.CopiesOf(ctx, "web", "web2")
		if err != nil || got != want {
			t.Fatalf("%s: CopiesOf = %v, %v; want %v", what, got, err, want)
		}
	}
	check(true, "all copied")
	if err := s.Delete(ctx, "web2", 2); err != nil {
		t.Fatal(err)
	}
	check(true, "one of two copied")
	if err := s.Delete(ctx, "web", 1); err != nil {
		t.Fatal(err)
	}
	check(false, "the copied revision's old record deleted, the other not copied")
	if _, err := s.CopyHistory(ctx, "web", "web2", nil); err != nil {
		t.Fatal(err)
	}
	check(true, "old records partly deleted")
	if err := s.DeleteHistory(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	later := rec("web", 1, StatusDeployed)
	later.Info.LastDeployed = later.Info.LastDeployed.Add(time.Hour)
	if err := s.Create(ctx, later); err != nil {
		t.Fatal(err)
	}
	check(false, "another release installed as web after the rename")
}
