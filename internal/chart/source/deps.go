package source

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
)

// resolveDependencies resolves the Chart.yaml dependencies the archive's
// charts/ lacks, from their https:// or oci:// repositories, as
// `helm dependency build` would (constraints from Chart.yaml).
func (res *Resolver) resolveDependencies(ctx context.Context, parent Request, r Resolved) ([]Resolved, error) {
	ch, err := res.Cache.load(r.Digest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", parent.describe(), err)
	}
	return res.fetchDependencies(ctx, ch, parent.Repository, false)
}

// ResolveLocalDependencies resolves the dependencies a local chart's
// charts/ lacks from https://, http:// and oci:// repositories; file://
// dependencies are read from disk when the chart is loaded
// (AddDependencies) and are not resolved here.
func (res *Resolver) ResolveLocalDependencies(ctx context.Context, ch *chart.Chart) ([]Resolved, error) {
	return res.fetchDependencies(ctx, ch, Repository{}, true)
}

func (res *Resolver) fetchDependencies(ctx context.Context, ch *chart.Chart, parent Repository, local bool) ([]Resolved, error) {
	var out []Resolved
	for _, d := range missingDependencies(ch) {
		repoURL := d.Repository
		switch {
		case strings.HasPrefix(repoURL, "https://"), strings.HasPrefix(repoURL, "http://"), strings.HasPrefix(repoURL, "oci://"):
		case local && strings.HasPrefix(repoURL, "file://"):
			continue
		default:
			return nil, fmt.Errorf("chart %s %s: dependency %q (repository %q) is not in the chart's charts/ directory and convoy fetches dependencies only from https://, http:// or oci:// repositories (and file:// for local charts)", ch.Metadata.Name, ch.Metadata.Version, d.Name, repoURL)
		}
		dr, err := res.Resolve(ctx, Request{Repository: dependencyRepository(parent, repoURL), Chart: d.Name, Constraint: d.Version})
		if err != nil {
			return nil, fmt.Errorf("chart %s %s: dependency %q: %w", ch.Metadata.Name, ch.Metadata.Version, d.Name, err)
		}
		out = append(out, dr)
	}
	return out, nil
}

// dependencyRepository is the repository of a dependency at url: the
// parent repository's credentials go with it only when it lives on the
// same host, as Helm passes them.
func dependencyRepository(parent Repository, url string) Repository {
	if parent.URL != "" && sameHost(strings.Replace(parent.URL, "oci://", "https://", 1), strings.Replace(url, "oci://", "https://", 1)) {
		repo := parent
		repo.Name = ""
		repo.URL = url
		return repo
	}
	return Repository{URL: url}
}

// MissingDependencies names the Chart.yaml dependencies of ch that its
// charts/ lacks and that must be fetched (not file://).
func MissingDependencies(ch *chart.Chart) []string {
	var out []string
	for _, d := range missingDependencies(ch) {
		if !strings.HasPrefix(d.Repository, "file://") {
			out = append(out, d.Name)
		}
	}
	return out
}

// HasMissingDependencies reports whether ch's charts/ lacks any
// Chart.yaml dependency (fetched or file://).
func HasMissingDependencies(ch *chart.Chart) bool { return len(missingDependencies(ch)) > 0 }

// AddDependencies returns the local chart ch (loaded from chartDir) with
// its missing dependencies added under charts/: the resolved ones from
// the cache, file:// ones from disk relative to chartDir, as
// `helm dependency build` would package them.
func (c Cache) AddDependencies(ch *chart.Chart, chartDir string, deps []Resolved) (*chart.Chart, error) {
	byName := map[string]Resolved{}
	for _, d := range deps {
		byName[d.Name] = d
	}
	var extra []namedArchive
	for _, d := range missingDependencies(ch) {
		if rel, ok := strings.CutPrefix(d.Repository, "file://"); ok {
			dir := rel
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(chartDir, rel)
			}
			sub, err := chart.Load(dir)
			if err != nil {
				return nil, fmt.Errorf("dependency %q (%s): %w", d.Name, d.Repository, err)
			}
			data, err := archiveOf(sub)
			if err != nil {
				return nil, err
			}
			extra = append(extra, namedArchive{name: sub.Metadata.Name + "-" + sub.Metadata.Version + ".tgz", data: data})
			continue
		}
		r, ok := byName[d.Name]
		if !ok {
			return nil, fmt.Errorf("dependency %q (%s, version %q) is not in charts/ nor in %s; run `convoy init`", d.Name, d.Repository, d.Version, LockFileName)
		}
		a, err := c.lockedArchive(r)
		if err != nil {
			return nil, err
		}
		extra = append(extra, a)
	}
	base, err := archiveOf(ch)
	if err != nil {
		return nil, err
	}
	data, err := addToArchive(bytes.NewReader(base), extra)
	if err != nil {
		return nil, err
	}
	return chart.LoadArchive(bytes.NewReader(data))
}

// archiveOf packs a loaded chart's files (as loaded: .helmignore applied)
// into a chart archive.
func archiveOf(ch *chart.Chart) ([]byte, error) {
	return writeTarGz(func(tw *tar.Writer) error {
		for _, f := range ch.Raw {
			if err := writeTarFile(tw, ch.Metadata.Name+"/"+f.Name, f.Data, f.ModTime); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeTarGz returns the gzipped tar archive that fill writes.
func writeTarGz(fill func(tw *tar.Writer) error) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := fill(tw); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeTarFile adds a regular file to an archive.
func writeTarFile(tw *tar.Writer, name string, data []byte, modTime time.Time) error {
	h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: modTime, Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// missingDependencies lists the Chart.yaml dependencies without a subchart
// of that name under charts/.
func missingDependencies(ch *chart.Chart) []*chart.Dependency {
	have := map[string]bool{}
	for _, sub := range ch.Dependencies() {
		have[sub.Name()] = true
	}
	var out []*chart.Dependency
	for _, d := range ch.Metadata.Dependencies {
		if d != nil && !have[d.Name] {
			out = append(out, d)
		}
	}
	return out
}

// LoadLocked loads a resolved chart from the cache alone (no network): the
// archive, with its fetched dependencies added under charts/.
func (c Cache) LoadLocked(r Resolved) (*chart.Chart, error) {
	if len(r.Dependencies) == 0 {
		return c.load(r.Digest)
	}
	if _, err := c.load(r.Digest); err != nil {
		return nil, err
	}
	var extra []namedArchive
	for _, d := range r.Dependencies {
		a, err := c.lockedArchive(d)
		if err != nil {
			return nil, err
		}
		extra = append(extra, a)
	}
	f, err := c.Open(r.Digest)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := addToArchive(f, extra)
	if err != nil {
		return nil, fmt.Errorf("cached chart %s: %w", r.Digest, err)
	}
	return chart.LoadArchive(bytes.NewReader(data))
}

// lockedArchive is a fetched dependency as it goes under charts/: its
// archive with its own dependencies added, checked to load.
func (c Cache) lockedArchive(r Resolved) (namedArchive, error) {
	if _, err := c.LoadLocked(r); err != nil {
		return namedArchive{}, fmt.Errorf("dependency %s %s: %w", r.Name, r.Version, err)
	}
	data, err := c.withDependencies(r)
	if err != nil {
		return namedArchive{}, err
	}
	return namedArchive{name: r.Name + "-" + r.Version + ".tgz", data: data}, nil
}

// withDependencies returns the archive bytes of r with its own fetched
// dependencies added (recursively).
func (c Cache) withDependencies(r Resolved) ([]byte, error) {
	p, err := c.Path(r.Digest)
	if err != nil {
		return nil, err
	}
	if len(r.Dependencies) == 0 {
		return os.ReadFile(p)
	}
	var extra []namedArchive
	for _, d := range r.Dependencies {
		data, err := c.withDependencies(d)
		if err != nil {
			return nil, err
		}
		extra = append(extra, namedArchive{name: d.Name + "-" + d.Version + ".tgz", data: data})
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return addToArchive(f, extra)
}

type namedArchive struct {
	name string
	data []byte
}

// addToArchive copies a chart archive and adds files under
// <chart>/charts/. The chart loader re-validates the result.
func addToArchive(r io.Reader, extra []namedArchive) ([]byte, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	return writeTarGz(func(tw *tar.Writer) error {
		tr := tar.NewReader(zr)
		root := ""
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if root == "" {
				root, _, _ = strings.Cut(strings.TrimPrefix(h.Name, "./"), "/")
			}
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			if _, err := io.Copy(tw, io.LimitReader(tr, chart.DefaultMaxBytes)); err != nil {
				return err
			}
		}
		for _, e := range extra {
			if err := writeTarFile(tw, root+"/charts/"+e.name, e.data, time.Time{}); err != nil {
				return err
			}
		}
		return nil
	})
}
