package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
)

// InitRequest says how to resolve the stack's charts.
type InitRequest struct {
	// Upgrade re-resolves every chart to the highest version its
	// constraint admits, ignoring the lock file.
	Upgrade bool
	// UpgradeOnly, if not nil, limits Upgrade to these release blocks (by
	// name); the others keep their locked versions (convoy outdated
	// --update).
	UpgradeOnly map[string]bool
	// Frozen fills the chart cache from the lock file and never writes
	// it: a chart the lock file lacks or no longer matches is an error
	// (the controller runs stacks pulled as they were pushed).
	Frozen bool
	// Resolver fetches what the cache lacks. With Access set (the
	// controller's, whose cache several namespaces share), every chart
	// the stack will load from the cache is first proven readable with
	// the stack's credentials (source.Resolver.Authorize).
	Resolver *source.Resolver
	// Warn receives warnings (an unreadable lock file replaced).
	Warn io.Writer
}

// InitEntry is one chart (or dependency) init locked.
type InitEntry struct {
	Release    config.ReleaseAddr
	Chart      string
	Constraint string
	Version    string
	// Was is the previously locked version when it changed.
	Was string
	// Kept: the locked version still satisfies the constraint.
	Kept bool
	// Dependency names a dependency of a local chart.
	Dependency string
}

// Initialized is what init wrote.
type Initialized struct {
	Entries []InitEntry
	// LockFile is the lock file written ("" when nothing needed locking).
	LockFile string
	Charts   int
}

// Init resolves every release whose chart comes from a repository or a
// registry (and the dependencies local charts lack), fills the chart cache
// and writes the lock file.
func (s *Session) Init(ctx context.Context, req InitRequest) (*Initialized, error) {
	if s.ls == nil {
		return nil, errGone
	}
	return initLoaded(ctx, s.ls, req)
}

// initLoaded is Init of a loaded stack.
func initLoaded(ctx context.Context, ls *Loaded, req InitRequest) (*Initialized, error) {
	st := ls.Stack
	old, ldiags := source.ReadLock(st.Dir)
	switch {
	case ldiags.HasErrors() && req.Upgrade:
		// --upgrade resolves everything anyway: a broken lock file is
		// replaced, not an obstacle.
		if req.Warn != nil {
			fmt.Fprintf(req.Warn, "Warning: ignoring the unreadable %s (--upgrade rewrites it): %s\n", source.LockFileName, ldiags.Error())
		}
		old = &source.Lock{Releases: map[string]source.LockedRelease{}}
	case ldiags.HasErrors():
		return nil, &DiagnosticsError{Diags: ldiags}
	}
	res := req.Resolver
	byRelease, err := remoteReleases(st)
	if err != nil {
		return nil, err
	}
	out := &Initialized{}
	lock := &source.Lock{Releases: map[string]source.LockedRelease{}}
	var errs []error
	// What the stack will load from the cache, and with which
	// credentials: proven readable before it is served (res.Access).
	type use struct {
		release config.ReleaseAddr
		repo    source.Repository
		locked  source.Resolved
	}
	var uses []use
	for _, name := range slices.Sorted(maps.Keys(byRelease)) {
		r := byRelease[name]
		sreq, err := resolve.SourceRequest(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		e, locked := old.Releases[name]
		upgrade := req.Upgrade && (req.UpgradeOnly == nil || req.UpgradeOnly[name])
		if locked && !upgrade && resolve.LockMatches(e, r, sreq) == "" {
			if err := fillCache(ctx, res, sreq, e); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", r.Addr.Release, err))
				continue
			}
			e.Constraint = r.Version // a changed constraint that still admits the locked version
			lock.Releases[name] = e
			uses = append(uses, use{r.Addr.Release, sreq.Repository, e.Resolved})
			out.Entries = append(out.Entries, InitEntry{Release: r.Addr.Release, Chart: r.Chart, Constraint: r.Version, Version: e.Version, Kept: true})
			continue
		}
		got, err := res.Resolve(ctx, sreq)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Addr.Release, err))
			continue
		}
		lock.Releases[name] = source.LockedRelease{Chart: r.Chart, Constraint: r.Version, Resolved: got}
		uses = append(uses, use{r.Addr.Release, sreq.Repository, got})
		entry := InitEntry{Release: r.Addr.Release, Chart: r.Chart, Constraint: r.Version, Version: got.Version}
		if locked && e.Version != got.Version {
			entry.Was = e.Version
		}
		out.Entries = append(out.Entries, entry)
	}
	for _, r := range localReleases(st) {
		name := r.Addr.Release.Name
		e, err := lockLocalDependencies(ctx, req.Upgrade, st, r, old.Releases[name], res)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Addr.Release, err))
			continue
		}
		if e == nil {
			continue
		}
		lock.Releases[name] = *e
		uses = append(uses, use{r.Addr.Release, source.Repository{}, e.Resolved})
		for _, d := range e.Dependencies {
			out.Entries = append(out.Entries, InitEntry{Release: r.Addr.Release, Chart: r.Chart, Dependency: d.Name, Version: d.Version})
		}
	}
	for _, u := range uses {
		if err := res.Authorize(ctx, u.repo, u.locked); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", u.release, err))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// A release block with no instance in this environment (count = 0
	// here) keeps its entry: another environment deploys it, and an init
	// for this one must not unlock it there.
	instantiated := map[string]bool{}
	for _, r := range st.Releases {
		instantiated[r.Addr.Release.Name] = true
	}
	for name, e := range old.Releases {
		if _, declared := ls.Config.Releases[name]; declared && !instantiated[name] {
			lock.Releases[name] = e
		}
	}
	if len(lock.Releases) == 0 && len(old.Releases) == 0 {
		return out, nil
	}
	if req.Frozen {
		if stale := staleLockEntries(old, lock); len(stale) > 0 {
			return nil, fmt.Errorf("%s in %s is out of date for %s: run convoy init and push the stack again", source.LockFileName, st.Dir, strings.Join(stale, ", "))
		}
		return out, nil
	}
	if err := lock.Write(st.Dir); err != nil {
		return nil, err
	}
	out.LockFile, out.Charts = filepath.Join(st.Dir, source.LockFileName), len(lock.Releases)
	return out, nil
}

func orLatest(c string) string {
	if c == "" {
		return "latest"
	}
	return c
}

// remoteReleases returns one instance per release block whose chart comes
// from a repository or registry. The lock file has one entry per block, so
// instances must agree on chart and version.
func remoteReleases(st *config.Stack) (map[string]*config.ReleaseInstance, error) {
	out := map[string]*config.ReleaseInstance{}
	for _, r := range st.Releases {
		if r.ChartSource == config.ChartLocal || r.ChartSource == config.ChartManifests {
			continue
		}
		name := r.Addr.Release.Name
		if first, ok := out[name]; ok {
			if first.Chart != r.Chart || first.Version != r.Version {
				return nil, fmt.Errorf("%s: instances use different charts (%s %q and %s %q); the lock file holds one chart per release block", r.Addr.Release, first.Chart, first.Version, r.Chart, r.Version)
			}
			continue
		}
		out[name] = r
	}
	return out, nil
}

// fillCache makes sure a locked chart (and its dependencies) is cached,
// downloading exactly the locked version if not; a repository that now
// serves other bytes for it is an error, never silently accepted.
func fillCache(ctx context.Context, res *source.Resolver, req source.Request, e source.LockedRelease) error {
	if _, err := res.Cache.LoadLocked(e.Resolved); err == nil {
		return nil
	} else if !errors.Is(err, source.ErrNotCached) {
		return err
	}
	pinned := req
	if strings.HasPrefix(req.Repository.URL, "oci://") && e.Manifest != "" {
		pinned.Repository.URL = resolve.SourceOf(req) + "@" + e.Manifest
		pinned.Chart = ""
		pinned.Constraint = ""
	} else {
		pinned.Constraint = e.Version
	}
	got, err := res.Resolve(ctx, pinned)
	if err != nil {
		return err
	}
	if got.Digest != e.Digest {
		return fmt.Errorf("%s %s: the repository now serves an archive with digest %s, the lock file records %s; if that is expected, run `convoy init --upgrade`", e.Chart, e.Version, got.Digest, e.Digest)
	}
	return nil
}

// localReleases returns the first instance of each release block with a
// local chart.
func localReleases(st *config.Stack) []*config.ReleaseInstance {
	seen := map[string]bool{}
	var out []*config.ReleaseInstance
	for _, r := range st.Releases {
		if r.ChartSource == config.ChartLocal && !seen[r.Addr.Release.Name] {
			seen[r.Addr.Release.Name] = true
			out = append(out, r)
		}
	}
	return out
}

// lockLocalDependencies locks the dependencies a local chart's charts/
// lacks (nil when there are none to fetch). A lock entry is kept while it
// names every missing dependency at a cached version its constraint
// admits, unless --upgrade.
func lockLocalDependencies(ctx context.Context, upgrade bool, st *config.Stack, r *config.ReleaseInstance, prev source.LockedRelease, res *source.Resolver) (*source.LockedRelease, error) {
	path, err := st.LocalChartPath(r)
	if err != nil {
		return nil, err
	}
	ch, err := chart.Load(path)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", r.Chart, err)
	}
	missing := source.MissingDependencies(ch)
	if len(missing) == 0 {
		return nil, nil
	}
	if !upgrade && prev.Source == source.LocalSource && prev.Chart == r.Chart && localLockHolds(ch, prev, res.Cache) {
		return &prev, nil
	}
	deps, err := res.ResolveLocalDependencies(ctx, ch)
	if err != nil {
		return nil, err
	}
	return &source.LockedRelease{Chart: r.Chart, Resolved: source.Resolved{Source: source.LocalSource, Name: ch.Metadata.Name, Version: ch.Metadata.Version, Dependencies: deps}}, nil
}

func localLockHolds(ch *chart.Chart, e source.LockedRelease, cache source.Cache) bool {
	locked := map[string]source.Resolved{}
	for _, d := range e.Dependencies {
		locked[d.Name] = d
	}
	for _, d := range ch.Metadata.Dependencies {
		if d == nil || strings.HasPrefix(d.Repository, "file://") {
			continue
		}
		l, ok := locked[d.Name]
		if !ok {
			if slices.Contains(source.MissingDependencies(ch), d.Name) {
				return false
			}
			continue
		}
		if !source.ConstraintAdmits(d.Version, l.Version) {
			return false
		}
		if _, err := cache.LoadLocked(l); err != nil {
			return false
		}
	}
	return true
}

// staleLockEntries names the release blocks whose entry in the lock file
// differs from what init resolved.
func staleLockEntries(old, now *source.Lock) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(now.Releases)) {
		if e, ok := old.Releases[name]; !ok || !reflect.DeepEqual(e, now.Releases[name]) {
			out = append(out, "release "+strconv.Quote(name))
		}
	}
	return out
}
