package release_test

import (
	"context"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
)

// TestLastRevisionIsTheNewestWhateverItsStatus: what an uninstall step
// checks against the plan (apply.Engine).
func TestLastRevisionIsTheNewestWhateverItsStatus(t *testing.T) {
	ns := cluster.Namespace(t)
	e, _ := newEngine(t)
	ctx := context.Background()
	last := func(want int) {
		t.Helper()
		got, err := e.LastRevision(ctx, ns, "web")
		if err != nil || got != want {
			t.Fatalf("LastRevision = %d, %v; want %d", got, err, want)
		}
	}
	last(0)
	for _, msg := range []string{"v1", "v2"} {
		if _, err := e.Deploy(ctx, appRequest(t, ns, "web", map[string]any{"message": msg})); err != nil {
			t.Fatal(err)
		}
	}
	last(2)
	if _, err := e.Uninstall(ctx, release.UninstallRequest{Name: "web", Namespace: ns, KeepHistory: true, Wait: true}); err != nil {
		t.Fatal(err)
	}
	last(2) // uninstalled, its history kept
	if _, err := e.Uninstall(ctx, release.UninstallRequest{Name: "web", Namespace: ns, Wait: true}); err != nil {
		t.Fatal(err)
	}
	last(0)
}
