package resolve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/zclconf/go-cty/cty"
)

// SourceRequest is what the chart source resolver needs to fetch the chart
// of a release from a repository or registry. Secrets are unmarked here
// and only ever travel in request headers.
func SourceRequest(r *config.ReleaseInstance) (source.Request, error) {
	switch r.ChartSource {
	case config.ChartOCI:
		return source.Request{Repository: source.Repository{URL: r.Chart}, Constraint: r.Version}, nil
	case config.ChartRepo:
		spec := r.Repository
		if spec == nil {
			return source.Request{}, instError(r, "chart %q has no repository", r.Chart)
		}
		repo := source.Repository{Name: spec.Name, URL: spec.URL, Username: spec.Username}
		pw, err := secretString(spec.Password)
		if err != nil {
			return source.Request{}, instError(r, "repository %q: password: %w", spec.Name, err)
		}
		repo.Password = pw
		tok, err := secretString(spec.BearerToken)
		if err != nil {
			return source.Request{}, instError(r, "repository %q: bearer_token: %w", spec.Name, err)
		}
		repo.BearerToken = tok
		repo.CAFile, repo.CertFile, repo.KeyFile = spec.CAFile, spec.CertFile, spec.KeyFile
		repo.InsecureSkipTLSVerify = spec.InsecureSkipTLSVerify
		_, name, _ := strings.Cut(r.Chart, "/")
		return source.Request{Repository: repo, Chart: name, Constraint: r.Version}, nil
	}
	return source.Request{}, instError(r, "chart %q is local, not from a repository", r.Chart)
}

func secretString(v cty.Value) (string, error) {
	if v.Type() == cty.NilType {
		return "", nil
	}
	v, _ = v.UnmarkDeep()
	switch {
	case v.IsNull():
		return "", nil
	case !v.IsKnown():
		return "", config.ErrUnknownValue
	case v.Type() != cty.String:
		return "", errors.New("not a string")
	}
	return v.AsString(), nil
}

// SourceOf is the source a lock entry must record for r: the repository
// URL, or the OCI reference without a digest.
func SourceOf(req source.Request) string {
	u := source.RedactURL(req.Repository.URL)
	if strings.HasPrefix(u, "oci://") {
		if req.Chart != "" {
			u = strings.TrimSuffix(u, "/") + "/" + req.Chart
		}
		u, _, _ = strings.Cut(u, "@")
	}
	return u
}

// LockMatches reports why a lock entry no longer fits r ("" when it does):
// another chart or source, or a constraint the locked version fails.
func LockMatches(e source.LockedRelease, r *config.ReleaseInstance, req source.Request) string {
	switch {
	case e.Chart != r.Chart:
		return fmt.Sprintf("the lock file records chart %q, the stack now says %q", e.Chart, r.Chart)
	case e.Source != SourceOf(req):
		return fmt.Sprintf("the lock file records source %s, the repository is now %s", e.Source, SourceOf(req))
	}
	if _, d, ok := strings.Cut(r.Chart, "@"); ok && d != e.Manifest {
		return fmt.Sprintf("the chart names manifest %s, the lock file records %s", d, e.Manifest)
	}
	if r.Version != e.Constraint && !source.ConstraintAdmits(r.Version, e.Version) {
		return fmt.Sprintf("the locked version %s does not satisfy the constraint %q", e.Version, r.Version)
	}
	return ""
}

// loadLocked loads the chart of a repository or registry release from the
// lock file of dir and the chart cache: no network access.
func (c *Charts) loadLocked(dir string, r *config.ReleaseInstance) (*chart.Chart, error) {
	lock, err := c.lockOf(dir)
	if err != nil {
		return nil, err
	}
	req, err := SourceRequest(r)
	if err != nil {
		return nil, err
	}
	e, ok := lock.Releases[r.Addr.Release.Name]
	if !ok {
		return nil, instError(r, "chart %q (version %q) is not in %s; run `convoy init` to resolve it", r.Chart, r.Version, source.LockFileName)
	}
	if why := LockMatches(e, r, req); why != "" {
		return nil, instError(r, "%s; run `convoy init` to resolve it again (or `convoy init --upgrade`)", why)
	}
	cache, err := c.cache()
	if err != nil {
		return nil, err
	}
	ch, err := c.locked.Get(e.Digest, func() (*chart.Chart, error) { return cache.LoadLocked(e.Resolved) })
	if err != nil {
		if errors.Is(err, source.ErrNotCached) {
			return nil, instError(r, "chart %s %s (%s) is locked but not in the chart cache %s; run `convoy init` to download it", r.Chart, e.Version, e.Digest, cache.Dir)
		}
		return nil, instError(r, "chart %s %s: %w", r.Chart, e.Version, err)
	}
	return ch, nil
}

func (c *Charts) lockOf(dir string) (*source.Lock, error) {
	return c.locks.Get(dir, func() (*source.Lock, error) {
		lock, diags := source.ReadLock(dir)
		if diags.HasErrors() {
			return nil, fmt.Errorf("%s: %s", source.LockFileName, diags.Error())
		}
		return lock, nil
	})
}

func (c *Charts) cache() (source.Cache, error) {
	if c.cacheDir == "" {
		return source.Cache{}, errors.New("no chart cache directory: set CONVOY_CACHE_DIR or HOME")
	}
	return source.Cache{Dir: c.cacheDir}, nil
}

// withLocalDependencies adds to a local chart the dependencies its charts/
// lacks: file:// ones from disk, fetched ones from the chart cache at the
// versions the lock file records for the release.
func (c *Charts) withLocalDependencies(dir, path string, r *config.ReleaseInstance, ch *chart.Chart) (*chart.Chart, error) {
	var deps []source.Resolved
	if len(source.MissingDependencies(ch)) > 0 {
		lock, err := c.lockOf(dir)
		if err != nil {
			return nil, err
		}
		e, ok := lock.Releases[r.Addr.Release.Name]
		if !ok || e.Source != source.LocalSource || e.Chart != r.Chart {
			return nil, instError(r, "chart %s lacks dependencies %s in charts/ and %s does not lock them; run `convoy init` (or vendor them with `helm dependency build`)", r.Chart, strings.Join(source.MissingDependencies(ch), ", "), source.LockFileName)
		}
		deps = e.Dependencies
	}
	cache, err := c.cache()
	if err != nil {
		return nil, err
	}
	chartDir := path
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		chartDir = filepath.Dir(path)
	}
	full, err := c.deps.Get(depsKey{release: r.Addr.Release.Name, path: path}, func() (*chart.Chart, error) {
		return cache.AddDependencies(ch, chartDir, deps)
	})
	if err != nil {
		hint := ""
		if errors.Is(err, source.ErrNotCached) {
			hint = "; run `convoy init` to download it"
		}
		return nil, instError(r, "chart %s: %w%s", r.Chart, err, hint)
	}
	return full, nil
}
