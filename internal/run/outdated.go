package run

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	"github.com/hashicorp/hcl/v2"
)

// OutdatedRequest says where to look for newer charts.
type OutdatedRequest struct {
	// Resolver fetches the repositories' catalogs (indexes are revalidated
	// against the copies in its cache).
	Resolver *source.Resolver
	// Concurrency bounds the repositories asked at once; 0 means 8.
	Concurrency int
}

// OutdatedRelease is what the repository of one release block's chart
// offers compared with what is locked.
type OutdatedRelease struct {
	Release config.ReleaseAddr
	// Chart is as written; Source the repository URL or OCI reference
	// (passwords in URLs redacted).
	Chart, Source string
	Constraint    string
	// Locked is the version in the lock file ("" when not locked).
	Locked string
	source.Newest
	// Deprecated: the chart's newest (or locked) version says so in its
	// Chart.yaml.
	Deprecated bool
	// Outdated: a newer version than the locked one is published.
	Outdated bool
	// Skipped names index entries that did not decode.
	Skipped []string
	// Err is why the repository could not be read (the other releases are
	// reported all the same).
	Err error
	// Block is the release block's header; VersionRange the range of its
	// version attribute (nil when it has none).
	Block        hcl.Range
	VersionRange *hcl.Range
}

// Outdated reports, for each release block whose chart comes from a
// repository or a registry, the newest versions published. Each
// repository is asked once (an HTTP index for all its charts, an OCI
// repository's tag list), several at once; a repository that fails is
// reported on its releases, never stopping the others.
func (s *Session) Outdated(ctx context.Context, req OutdatedRequest) ([]OutdatedRelease, error) {
	if s.ls == nil {
		return nil, errGone
	}
	st := s.ls.Stack
	lock, diags := source.ReadLock(st.Dir)
	if diags.HasErrors() {
		return nil, &DiagnosticsError{Diags: diags, Files: s.ls.Config.Files}
	}
	byRelease, err := remoteReleases(st)
	if err != nil {
		return nil, err
	}
	out := make([]OutdatedRelease, 0, len(byRelease))
	reqs := make([]source.Request, 0, len(byRelease))
	for _, name := range slices.Sorted(maps.Keys(byRelease)) {
		r := byRelease[name]
		o := OutdatedRelease{Release: r.Addr.Release, Chart: r.Chart, Constraint: r.Version, Locked: lock.Releases[name].Version}
		if b := s.ls.Config.Releases[name]; b != nil {
			o.Block = b.DeclRange
			if b.Version != nil {
				rng := b.Version.Range()
				o.VersionRange = &rng
			}
		}
		sreq, err := resolve.SourceRequest(r)
		if err != nil {
			o.Err = err
		} else {
			o.Source = source.RedactURL(resolve.SourceOf(sreq))
		}
		out = append(out, o)
		reqs = append(reqs, sreq)
	}
	// One catalog per repository: HTTP charts share their repository's
	// index, an OCI chart is its own repository.
	groups := map[string][]int{}
	for i, r := range reqs {
		if out[i].Err != nil {
			continue
		}
		key := r.Repository.URL
		if strings.HasPrefix(key, "oci://") {
			key = resolve.SourceOf(r)
		}
		groups[key] = append(groups[key], i)
	}
	n := req.Concurrency
	if n <= 0 {
		n = 8
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, idx := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cat, err := req.Resolver.Catalog(ctx, reqs[idx[0]])
			for _, i := range idx {
				if err != nil {
					out[i].Err = err
					continue
				}
				outdatedOf(ctx, cat, reqs[i], &out[i])
			}
		}()
	}
	wg.Wait()
	return out, nil
}

// outdatedOf fills o from its repository's catalog.
func outdatedOf(ctx context.Context, cat *source.Catalog, req source.Request, o *OutdatedRelease) {
	versions, skipped, err := cat.Versions(req.Chart)
	o.Skipped = skipped
	if err != nil {
		o.Err = err
		return
	}
	if len(versions) == 0 {
		o.Err = fmt.Errorf("%s publishes no version of %q", o.Source, chartLabel(req))
		return
	}
	n, err := source.NewestVersions(o.Constraint, o.Locked, versions)
	if err != nil {
		o.Err = err
		return
	}
	if strings.Contains(req.Repository.URL, "@sha256:") {
		n.Wanted = o.Locked // pinned to a digest: it admits nothing else
	}
	o.Newest = n
	o.Outdated = source.Newer(n.Major, o.Locked) || o.Locked == "" && n.Wanted != ""
	for _, v := range []string{n.Major, o.Locked} {
		if v == "" || o.Deprecated {
			continue
		}
		d, err := cat.Deprecated(ctx, req.Chart, v)
		if err != nil {
			o.Err = err
			return
		}
		o.Deprecated = d
		if !strings.HasPrefix(req.Repository.URL, "oci://") {
			continue
		}
		break // OCI: two requests per version; the newest says it for the chart
	}
}

func chartLabel(req source.Request) string {
	if req.Chart != "" {
		return req.Chart
	}
	return req.Repository.URL[strings.LastIndex(req.Repository.URL, "/")+1:]
}
