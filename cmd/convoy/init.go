package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/resolve"
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"
)

type initOptions struct {
	Stack stackFlags
	// Upgrade re-resolves every chart to the highest version its
	// constraint admits, ignoring the lock file.
	Upgrade bool
}

func newInitCmd(s streams) *cobra.Command {
	var o initOptions
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Resolve the charts of repository and registry releases, lock them and fill the chart cache",
		Long: `Init resolves every release whose chart comes from a repository block or an
oci:// reference: it picks the highest version the release's version
constraint admits, downloads the archive (and dependencies its charts/ lacks)
into the chart cache shared by all stacks, and records version and digest in
convoy.lock.hcl beside the stack. plan and apply then use exactly these
charts, offline.

Releases already in the lock file keep their locked version while it still
satisfies the constraint; --upgrade resolves them all again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), s)
		},
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	cmd.Flags().BoolVar(&o.Upgrade, "upgrade", false, "resolve every chart again, ignoring the versions in the lock file")
	return cmd
}

// newResolver is the chart source resolver of the CLI: the default chart
// cache, Helm's registry config then Docker's for registry credentials.
func newResolver(s streams, getenv func(string) string) (*source.Resolver, error) {
	dir, err := source.DefaultCacheDir(getenv)
	if err != nil {
		return nil, err
	}
	var configs []string
	if p := getenv("HELM_REGISTRY_CONFIG"); p != "" {
		configs = append(configs, p)
	} else if cfg, err := os.UserConfigDir(); err == nil {
		configs = append(configs, filepath.Join(cfg, "helm", "registry", "config.json"))
	}
	if d := getenv("DOCKER_CONFIG"); d != "" {
		configs = append(configs, filepath.Join(d, "config.json"))
	} else if home, err := os.UserHomeDir(); err == nil {
		configs = append(configs, filepath.Join(home, ".docker", "config.json"))
	}
	return &source.Resolver{Cache: source.Cache{Dir: dir}, RegistryConfigs: configs, Warn: s.Err}, nil
}

func (o initOptions) Run(ctx context.Context, s streams) error {
	ls, diags := o.Stack.loadStack(ctx)
	if diags.HasErrors() {
		var files map[string]*hcl.File
		if ls.Config != nil {
			files = ls.Config.Files
		}
		if err := writeDiagnostics(s.Err, diags, files); err != nil {
			return err
		}
		return errSilent
	}
	st := ls.Stack
	old, ldiags := source.ReadLock(st.Dir)
	switch {
	case ldiags.HasErrors() && o.Upgrade:
		// --upgrade resolves everything anyway: a broken lock file is
		// replaced, not an obstacle.
		fmt.Fprintf(s.Err, "Warning: ignoring the unreadable %s (--upgrade rewrites it): %s\n", source.LockFileName, ldiags.Error())
		old = &source.Lock{Releases: map[string]source.LockedRelease{}}
	case ldiags.HasErrors():
		if err := writeDiagnostics(s.Err, ldiags, nil); err != nil {
			return err
		}
		return errSilent
	}
	res, err := newResolver(s, os.Getenv)
	if err != nil {
		return err
	}
	byRelease, err := remoteReleases(st)
	if err != nil {
		return err
	}
	lock := &source.Lock{Releases: map[string]source.LockedRelease{}}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(byRelease)) {
		r := byRelease[name]
		req, err := resolve.SourceRequest(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		e, locked := old.Releases[name]
		if locked && !o.Upgrade && resolve.LockMatches(e, r, req) == "" {
			if err := fillCache(ctx, res, req, e); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", r.Addr.Release, err))
				continue
			}
			e.Constraint = r.Version // a changed constraint that still admits the locked version
			lock.Releases[name] = e
			fmt.Fprintf(s.Out, "%s: %s %s (locked)\n", r.Addr.Release, r.Chart, e.Version)
			continue
		}
		got, err := res.Resolve(ctx, req)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Addr.Release, err))
			continue
		}
		lock.Releases[name] = source.LockedRelease{Chart: r.Chart, Constraint: r.Version, Resolved: got}
		change := ""
		if locked && e.Version != got.Version {
			change = fmt.Sprintf(" (was %s)", e.Version)
		}
		fmt.Fprintf(s.Out, "%s: %s %s → %s%s\n", r.Addr.Release, r.Chart, orLatest(r.Version), got.Version, change)
	}
	for _, r := range localReleases(st) {
		name := r.Addr.Release.Name
		e, err := o.lockLocalDependencies(ctx, st, r, old.Releases[name], res)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Addr.Release, err))
			continue
		}
		if e == nil {
			continue
		}
		lock.Releases[name] = *e
		for _, d := range e.Dependencies {
			fmt.Fprintf(s.Out, "%s: %s dependency %s %s\n", r.Addr.Release, r.Chart, d.Name, d.Version)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if len(lock.Releases) == 0 && len(old.Releases) == 0 {
		fmt.Fprintln(s.Out, "No release takes its chart from a repository or registry; nothing to lock.")
		return nil
	}
	if err := lock.Write(st.Dir); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "Wrote %s (%d charts); the chart cache is %s.\n", filepath.Join(st.Dir, source.LockFileName), len(lock.Releases), res.Cache.Dir)
	return nil
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
		if r.ChartSource == config.ChartLocal {
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
func (o initOptions) lockLocalDependencies(ctx context.Context, st *config.Stack, r *config.ReleaseInstance, prev source.LockedRelease, res *source.Resolver) (*source.LockedRelease, error) {
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
	if !o.Upgrade && prev.Source == source.LocalSource && prev.Chart == r.Chart && localLockHolds(ch, prev, res.Cache) {
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
