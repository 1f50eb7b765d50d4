package controller

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
)

// cacheJanitor bounds the controller's cache of pulled stacks
// (stacks/sha256-…) and chart archives (charts/sha256/….tgz): past
// maxBytes, the least recently used entries are removed, never one a
// reconcile holds. Use is the entry's modification time, bumped by hold,
// so the order survives a restart. Entries are content-addressed, so a
// removed one is pulled again when a Stack needs it. Safe for concurrent
// use.
type cacheJanitor struct {
	stacksDir, chartsDir string
	maxBytes             int64 // 0: unbounded

	mu    sync.Mutex
	held  map[string]int   // entry path → reconciles holding it
	sizes map[string]int64 // entry path → bytes (entries never change)
	// evicted counts removed entries (for the metric).
	onEvict func(n int)
}

func newCacheJanitor(stacksDir, chartsDir string, maxBytes int64) *cacheJanitor {
	return &cacheJanitor{stacksDir: stacksDir, chartsDir: chartsDir, maxBytes: maxBytes, held: map[string]int{}, sizes: map[string]int64{}}
}

// hold marks the pulled stack and the chart archives its lock file names
// as in use until release is called, and as used now. ok is false when
// the stack's entry was removed before it was held: pull it again (its
// path is held already).
func (j *cacheJanitor) hold(f *artifact.Fetched) (release func(), ok bool) {
	paths := []string{j.stackEntry(f.Digest)}
	if lock, diags := source.ReadLock(f.Dir); !diags.HasErrors() && lock != nil {
		cache := source.Cache{Dir: j.chartsDir}
		var add func(r source.Resolved)
		add = func(r source.Resolved) {
			if p, err := cache.Path(r.Digest); err == nil {
				paths = append(paths, p)
			}
			for _, d := range r.Dependencies {
				add(d)
			}
		}
		for _, lr := range lock.Releases {
			add(lr.Resolved)
		}
	}
	j.mu.Lock()
	now := time.Now()
	for _, p := range paths {
		j.held[p]++
		_ = os.Chtimes(p, now, now) // absent yet: pulled, so new, soon
	}
	j.mu.Unlock()
	_, err := os.Stat(f.Dir)
	return func() {
		j.mu.Lock()
		defer j.mu.Unlock()
		for _, p := range paths {
			if j.held[p]--; j.held[p] <= 0 {
				delete(j.held, p)
			}
		}
	}, err == nil
}

func (j *cacheJanitor) stackEntry(digest string) string {
	return filepath.Join(j.stacksDir, strings.ReplaceAll(digest, ":", "-"))
}

type cacheEntry struct {
	path string
	size int64
	used time.Time
}

// evict removes the least recently used entries not held until the cache
// fits maxBytes (or only held entries are left).
func (j *cacheJanitor) evict() {
	if j == nil || j.maxBytes <= 0 {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var entries []cacheEntry
	var total int64
	add := func(path string, fi fs.FileInfo) {
		size, ok := j.sizes[path]
		if !ok {
			size = diskSize(path, fi)
			j.sizes[path] = size
		}
		total += size
		entries = append(entries, cacheEntry{path: path, size: size, used: fi.ModTime()})
	}
	list := func(dir string, keep func(name string, fi fs.FileInfo) bool) {
		des, _ := os.ReadDir(dir)
		for _, de := range des {
			fi, err := de.Info()
			if err == nil && keep(de.Name(), fi) {
				add(filepath.Join(dir, de.Name()), fi)
			}
		}
	}
	list(j.stacksDir, func(name string, fi fs.FileInfo) bool { return fi.IsDir() && strings.HasPrefix(name, "sha256-") })
	list(filepath.Join(j.chartsDir, "sha256"), func(name string, fi fs.FileInfo) bool {
		return fi.Mode().IsRegular() && strings.HasSuffix(name, ".tgz")
	})
	if total <= j.maxBytes {
		return
	}
	slices.SortFunc(entries, func(a, b cacheEntry) int { return a.used.Compare(b.used) })
	n := 0
	for _, e := range entries {
		if total <= j.maxBytes {
			break
		}
		if j.held[e.path] > 0 {
			continue
		}
		if err := os.RemoveAll(e.path); err != nil {
			continue
		}
		delete(j.sizes, e.path)
		total -= e.size
		n++
	}
	if n > 0 && j.onEvict != nil {
		j.onEvict(n)
	}
}

// diskSize is the bytes of a file, or of the regular files under a
// directory.
func diskSize(path string, fi fs.FileInfo) int64 {
	if !fi.IsDir() {
		return fi.Size()
	}
	var n int64
	_ = filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
