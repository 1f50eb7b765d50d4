package controller

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/stack/artifact"
)

// An entry of the cache as the controller leaves it: a stack unpacked
// (with a lock file naming a chart archive), or a chart archive.
func writeStackEntry(t *testing.T, j *cacheJanitor, hex string, size int, chartDigest string, used time.Time) *artifact.Fetched {
	t.Helper()
	digest := "sha256:" + hex
	entry := j.stackEntry(digest)
	dir := filepath.Join(entry, "tree")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("#", size)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if chartDigest != "" {
		lock := `release "api" {
  chart      = "oci://127.0.0.1:1/charts/api"
  constraint = "^1.0"
  source     = "oci://127.0.0.1:1/charts/api"
  version    = "1.0.0"
  digest     = "` + chartDigest + `"
}
`
		if err := os.WriteFile(filepath.Join(dir, "convoy.lock.hcl"), []byte(lock), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(entry, used, used); err != nil {
		t.Fatal(err)
	}
	return &artifact.Fetched{Dir: dir, Digest: digest}
}

func writeChart(t *testing.T, j *cacheJanitor, hex string, size int, used time.Time) string {
	t.Helper()
	p := filepath.Join(j.chartsDir, "sha256", hex+".tgz")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, used, used); err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func hexOf(c byte) string { return strings.Repeat(string(c), 64) }

// Past the bound, the least recently used entries go first; held ones
// (a stack being reconciled and the charts its lock file names) never.
func TestCacheEvictsLeastRecentlyUsedNeverHeld(t *testing.T) {
	dir := t.TempDir()
	j := newCacheJanitor(filepath.Join(dir, "stacks"), filepath.Join(dir, "charts"), 3500)
	evicted := 0
	j.onEvict = func(n int) { evicted += n }
	base := time.Now().Add(-time.Hour)
	chartA := writeChart(t, j, hexOf('a'), 1000, base)                                            // oldest
	inUse := writeStackEntry(t, j, hexOf('b'), 1000, "sha256:"+hexOf('a'), base.Add(time.Minute)) // names chart a
	old := writeStackEntry(t, j, hexOf('c'), 1000, "", base.Add(2*time.Minute))
	recent := writeStackEntry(t, j, hexOf('d'), 1000, "", base.Add(3*time.Minute))

	release, ok := j.hold(inUse)
	if !ok {
		t.Fatal("hold: the entry is there")
	}
	// hold bumps its use: it is now the most recent.
	j.evict()
	// 4000 bytes and b's lock file, bound 3500: chart a and stack b are held; c is the
	// least recently used of the rest, and removing it is enough.
	switch {
	case !exists(chartA) || !exists(inUse.Dir):
		t.Fatal("evicted an entry in use")
	case exists(old.Dir):
		t.Fatal("the least recently used stack is still cached")
	case !exists(recent.Dir):
		t.Fatal("evicted a more recent entry than needed")
	case evicted != 1:
		t.Fatalf("%d evictions counted, want 1", evicted)
	}

	// Released, the held entries are evictable like the others: b and a
	// were used last (held), d before them.
	release()
	j.maxBytes = 1000
	j.evict()
	if exists(recent.Dir) || exists(chartA) && exists(inUse.Dir) {
		t.Fatalf("after release, over the bound: d %v, a %v, b %v", exists(recent.Dir), exists(chartA), exists(inUse.Dir))
	}
}

// An entry evicted between the pull and the hold is reported, so that the
// reconcile pulls it again.
func TestCacheHoldReportsAnEvictedEntry(t *testing.T) {
	dir := t.TempDir()
	j := newCacheJanitor(filepath.Join(dir, "stacks"), filepath.Join(dir, "charts"), 1)
	f := writeStackEntry(t, j, hexOf('e'), 10, "", time.Now())
	j.evict()
	release, ok := j.hold(f)
	defer release()
	if ok {
		t.Fatal("hold of an evicted entry said ok")
	}
	if j.held[j.stackEntry(f.Digest)] != 1 {
		t.Fatal("the path is not held for the pull again")
	}
}

func TestCacheUnboundedEvictsNothing(t *testing.T) {
	dir := t.TempDir()
	j := newCacheJanitor(filepath.Join(dir, "stacks"), filepath.Join(dir, "charts"), 0)
	f := writeStackEntry(t, j, hexOf('f'), 10, "", time.Now())
	j.evict()
	if !exists(f.Dir) {
		t.Fatal("evicted with no bound")
	}
}
