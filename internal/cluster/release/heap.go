package release

import (
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/convoy-sh/convoy/internal/chart"
)

// tightGCPercent is the garbage collector's target (GOGC) while a large
// release is planned or applied: the heap may grow 20% over what is live
// before a collection, not 100%. A large release's rendering, records and
// objects are each about its size again, and most of what planning or
// applying it allocates is soon garbage: at Go's default, a 10 MiB
// release's apply peaked at twice what it held. Small releases (nearly
// all) keep the default and its lower CPU cost.
const tightGCPercent = 20

// tightHeap counts the holds of TightHeap; was is the target before the
// first. The target is the process's (runtime/debug), so the count is too.
var tightHeap struct {
	sync.Mutex
	holds int
	was   int
}

// TightHeap lowers the garbage collector's target to tightGCPercent until
// every caller has called its done (large releases planned or applied in
// parallel hold it together); a lower target already set (GOGC, or off)
// is kept.
func TightHeap() (done func()) {
	tightHeap.Lock()
	defer tightHeap.Unlock()
	if tightHeap.holds == 0 {
		tightHeap.was = debug.SetGCPercent(tightGCPercent)
		if tightHeap.was < 0 || tightHeap.was < tightGCPercent {
			debug.SetGCPercent(tightHeap.was)
		}
	}
	tightHeap.holds++
	var once sync.Once
	return func() {
		once.Do(func() {
			tightHeap.Lock()
			defer tightHeap.Unlock()
			tightHeap.holds--
			if tightHeap.holds == 0 {
				// The default target is a multiple of what the last
				// collection found live, which was the large release:
				// collected now, what follows (a plan saved, the next
				// release) is not let grow to twice that.
				runtime.GC()
				debug.SetGCPercent(tightHeap.was)
			}
		})
	}
}

// LargeChart reports whether a release of ch is large: its templates,
// files, schema and values file come to streamedOver or more, the size
// from which its record is encoded as a stream (small).
func LargeChart(ch *chart.Chart) bool {
	return ch != nil && chartSize(ch) >= streamedOver
}

// LargeRendering reports whether a release rendered as r is large: its
// manifests, hooks and chart come to streamedOver or more.
func LargeRendering(r *chart.Rendered) bool {
	if r == nil {
		return false
	}
	n := chartSize(r.Chart)
	for _, m := range r.Manifests {
		n += len(m.Content)
	}
	for _, h := range r.Hooks {
		if h != nil {
			n += len(h.Manifest)
		}
	}
	return n >= streamedOver
}

// chartSize is the length of ch's templates, files, schema and values
// file.
func chartSize(ch *chart.Chart) int {
	if ch == nil {
		return 0
	}
	n := len(ch.Schema) + len(ch.RawValues)
	for _, fs := range [][]*chart.File{ch.Templates, ch.Files} {
		for _, f := range fs {
			if f != nil {
				n += len(f.Data)
			}
		}
	}
	return n
}
