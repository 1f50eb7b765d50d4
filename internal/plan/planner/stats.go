package planner

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Stats count the work of one Compute (convoy plan --stats): what a plan
// of a large stack costs, and what incremental planning saved.
type Stats struct {
	// Renders are chart renderings (a release may be rendered twice: as
	// the next revision and, when that differs, as the deployed one).
	Renders atomic.Int64
	// Attributions are the renders that attributed changed fields to
	// their inputs (provenance.go).
	Attributions atomic.Int64
	// DryRuns are server-side dry-run applies and creates.
	DryRuns atomic.Int64
	// DryRunsSkipped are the dry runs a full plan proved no-ops without
	// asking the server (dryrunskip.go).
	DryRunsSkipped atomic.Int64
	// Lists are the lists of live objects (one per kind and namespace);
	// ListHits the reads they answered without a request of their own.
	Lists, ListHits atomic.Int64
	// RecordLists are the lists of release records: of their metadata
	// (one per namespace), of a namespace's records whole (a full
	// refresh, a plan that observes content) and of a namespace's
	// deployed records whole when the plan reads many of them
	// (recordreads.go: each such list replaces the GETs it saves);
	// RecordReads the records read whole one GET each, for releases
	// planned in full.
	RecordLists, RecordReads atomic.Int64
	// Unchanged are the releases found unchanged from their fingerprint
	// and their live objects, without a rendering or dry run; Full the
	// releases planned by rendering and dry runs.
	Unchanged, Full atomic.Int64
	// RecordBytes is the largest encoded size of the records the planned
	// revisions write; RecordsSized how many were sized.
	RecordBytes, RecordsSized atomic.Int64
	// SQLQueries are the statements sent to the records' database (SQL
	// storage; the run fills it in).
	SQLQueries atomic.Int64

	mu sync.Mutex
	// why names, by reason, the releases planned in full for it.
	why map[string][]string
}

// full counts the release at addr planned in full and why.
func (s *Stats) full(addr, why string) {
	s.Full.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.why == nil {
		s.why = map[string][]string{}
	}
	s.why[why] = append(s.why[why], addr)
}

// PlannedInFull is why each release planned in full was (by address).
func (s *Stats) PlannedInFull() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for why, addrs := range s.why {
		for _, a := range addrs {
			out[a] = why
		}
	}
	return out
}

func (s *Stats) add(c *atomic.Int64, n int64) { c.Add(n) }

// sized counts a record of n bytes sized.
func (s *Stats) sized(n int) {
	s.RecordsSized.Add(1)
	for {
		cur := s.RecordBytes.Load()
		if int64(n) <= cur || s.RecordBytes.CompareAndSwap(cur, int64(n)) {
			return
		}
	}
}

// maxNamed is how many releases planned in full the stats line names,
// each with its reason: every one in a plan of a real stack, the first of
// a fleet where many changed.
const maxNamed = 20

// String is the stats on one line.
func (s *Stats) String() string {
	s.mu.Lock()
	var why, which []string
	for _, k := range slices.Sorted(maps.Keys(s.why)) {
		why = append(why, fmt.Sprintf("%s:%d", k, len(s.why[k])))
		if len(which) < maxNamed {
			for _, a := range slices.Sorted(slices.Values(s.why[k])) {
				which = append(which, a+":"+k)
			}
		}
	}
	s.mu.Unlock()
	if len(which) > maxNamed {
		which = append(which[:maxNamed], "…")
	}
	out := fmt.Sprintf("renders=%d dry-runs=%d dry-runs-skipped=%d lists=%d list-hits=%d record-lists=%d record-reads=%d releases-unchanged-by-fingerprint=%d releases-planned-in-full=%d",
		s.Renders.Load(), s.DryRuns.Load(), s.DryRunsSkipped.Load(), s.Lists.Load(), s.ListHits.Load(), s.RecordLists.Load(), s.RecordReads.Load(), s.Unchanged.Load(), s.Full.Load())
	if len(why) > 0 {
		out += " (" + strings.Join(why, " ") + ")"
	}
	if n := s.SQLQueries.Load(); n > 0 {
		out += fmt.Sprintf(" sql-queries=%d", n)
	}
	if n := s.RecordsSized.Load(); n > 0 {
		out += fmt.Sprintf(" records-sized=%d largest-record-bytes=%d", n, s.RecordBytes.Load())
	}
	if n := s.Attributions.Load(); n > 0 {
		out += fmt.Sprintf(" attribution-renders=%d", n)
	}
	if len(which) > 0 {
		out += " in-full=[" + strings.Join(which, " ") + "]"
	}
	return out
}
