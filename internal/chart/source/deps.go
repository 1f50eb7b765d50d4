package source

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

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
	var out []Resolved
	for _, d := range missingDependencies(ch) {
		repoURL := d.Repository
		switch {
		case strings.HasPrefix(repoURL, "https://"), strings.HasPrefix(repoURL, "http://"), strings.HasPrefix(repoURL, "oci://"):
		default:
			return nil, fmt.Errorf("%s %s: dependency %q (repository %q) is not in the chart's charts/ directory and convoy fetches dependencies only from https://, http:// or oci:// repositories", r.Name, r.Version, d.Name, repoURL)
		}
		// Credentials are the parent repository's only when the dependency
		// lives on the same host, as Helm passes them.
		repo := Repository{URL: repoURL}
		if sameHost(strings.Replace(parent.Repository.URL, "oci://", "https://", 1), strings.Replace(repoURL, "oci://", "https://", 1)) {
			repo = parent.Repository
			repo.Name = ""
			repo.URL = repoURL
		}
		dr, err := res.Resolve(ctx, Request{Repository: repo, Chart: d.Name, Constraint: d.Version})
		if err != nil {
			return nil, fmt.Errorf("%s %s: dependency %q: %w", r.Name, r.Version, d.Name, err)
		}
		out = append(out, dr)
	}
	return out, nil
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
		if _, err := c.LoadLocked(d); err != nil {
			return nil, fmt.Errorf("dependency %s %s: %w", d.Name, d.Version, err)
		}
		data, err := c.withDependencies(d)
		if err != nil {
			return nil, err
		}
		extra = append(extra, namedArchive{name: d.Name + "-" + d.Version + ".tgz", data: data})
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
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tr := tar.NewReader(zr)
	root := ""
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if root == "" {
			root, _, _ = strings.Cut(strings.TrimPrefix(h.Name, "./"), "/")
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := io.Copy(tw, io.LimitReader(tr, chart.DefaultMaxBytes)); err != nil {
			return nil, err
		}
	}
	for _, e := range extra {
		h := &tar.Header{Name: root + "/charts/" + e.name, Mode: 0o644, Size: int64(len(e.data)), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
