package release

import (
	"runtime/debug"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart"
)

// gcPercent is the process's GOGC now.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestTightHeap: the collector's target is tightGCPercent while any hold
// lasts, and what it was once the last ends (a done called twice counts
// once); a lower target, or none (off), is kept.
func TestTightHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	a, b := TightHeap(), TightHeap()
	if got := gcPercent(); got != tightGCPercent {
		t.Fatalf("GOGC %d while held, want %d", got, tightGCPercent)
	}
	a()
	a()
	if got := gcPercent(); got != tightGCPercent {
		t.Fatalf("GOGC %d while one hold is left, want %d", got, tightGCPercent)
	}
	b()
	if got := gcPercent(); got != 100 {
		t.Fatalf("GOGC %d after the holds, want 100 back", got)
	}
	for _, set := range []int{10, -1} {
		debug.SetGCPercent(set)
		done := TightHeap()
		if got := gcPercent(); got != set {
			t.Fatalf("GOGC %d held from %d, want it kept", got, set)
		}
		done()
		if got := gcPercent(); got != set {
			t.Fatalf("GOGC %d after a hold from %d", got, set)
		}
	}
}

// TestLargeRelease: a release is large from streamedOver bytes of chart
// files or rendering on, as its record is streamed from there (small).
func TestLargeRelease(t *testing.T) {
	file := func(n int) *chart.File { return &chart.File{Name: "templates/a.yaml", Data: make([]byte, n)} }
	if LargeChart(&chart.Chart{Templates: []*chart.File{file(streamedOver - 1)}}) || LargeChart(nil) {
		t.Fatal("a chart under streamedOver is large")
	}
	big := &chart.Chart{Templates: []*chart.File{file(streamedOver / 2)}, Files: []*chart.File{file(streamedOver / 2)}}
	if !LargeChart(big) {
		t.Fatal("a chart of streamedOver is not large")
	}
	r := &chart.Rendered{Chart: &chart.Chart{}, Manifests: []chart.Manifest{{Path: "a", Content: string(make([]byte, streamedOver-10))}}}
	if LargeRendering(r) || LargeRendering(nil) {
		t.Fatal("a rendering under streamedOver is large")
	}
	r.Hooks = []*chart.Hook{{Manifest: "0123456789"}}
	if !LargeRendering(r) {
		t.Fatal("a rendering of streamedOver with its hooks is not large")
	}
	if small(&Release{Manifest: r.Manifests[0].Content, Hooks: []*Hook{{Manifest: "0123456789"}}}) {
		t.Fatal("small disagrees with LargeRendering")
	}
}
