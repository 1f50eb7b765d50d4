package source

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"go.yaml.in/yaml/v3"
	"oras.land/oras-go/v2/registry/remote"
)

// ChartVersion is one published version of a chart, as a repository lists
// it: the version string as published (an OCI tag with "_" read as "+")
// and, where the listing says so (an index entry), whether that version is
// marked deprecated.
type ChartVersion struct {
	Version    string
	Deprecated bool
}

// Catalog is what one repository publishes: the versions of its charts.
// An HTTP repository's catalog is its index, fetched once (revalidated by
// ETag and Last-Modified against the copy in the chart cache); an OCI
// repository holds one chart, whose catalog is its tag list.
type Catalog struct {
	res       *Resolver
	repo      Repository
	indexPath string             // HTTP
	ociRef    string             // OCI: host/path/chart
	oci       *remote.Repository // OCI
	tags      []string           // OCI

	mu     sync.Mutex
	listed map[string]listed // HTTP: by chart, read once
}

type listed struct {
	versions []ChartVersion
	skipped  []string
	err      error
}

// Catalog fetches what req's repository publishes (one request for an
// HTTP index, the tag list's pages for an OCI repository). A request for
// an HTTP chart and one for another chart of the same repository share
// the catalog: ask once per repository.
func (res *Resolver) Catalog(ctx context.Context, req Request) (*Catalog, error) {
	if strings.HasPrefix(req.Repository.URL, "oci://") {
		// A chart pinned to a digest is listed all the same: its
		// repository's tags say what else is published.
		pinned := req
		pinned.Repository.URL, _, _ = strings.Cut(req.Repository.URL, "@")
		repoRef, _, err := ociRef(pinned)
		if err != nil {
			return nil, err
		}
		repo, err := res.ociRepository(req, repoRef)
		if err != nil {
			return nil, err
		}
		c := &Catalog{res: res, repo: req.Repository, ociRef: repoRef, oci: repo}
		err = repo.Tags(ctx, "", func(tags []string) error {
			c.tags = append(c.tags, tags...)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("oci://%s: list tags: %w%s", repoRef, err, ociHint(err))
		}
		return c, nil
	}
	client, err := res.httpClient(req.Repository)
	if err != nil {
		return nil, err
	}
	path, err := res.fetchIndex(ctx, client, req.Repository)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.Repository.label(), err)
	}
	return &Catalog{res: res, repo: req.Repository, indexPath: path}, nil
}

// Versions lists the published versions of chart (ignored for OCI, whose
// repository is the chart). Index entries that do not decode are skipped
// and named in skipped (an index with one broken entry still lists the
// others); a file that is not an index at all is an error.
func (c *Catalog) Versions(chart string) (versions []ChartVersion, skipped []string, err error) {
	if c.indexPath != "" {
		c.mu.Lock()
		defer c.mu.Unlock()
		l, ok := c.listed[chart]
		if !ok {
			l.versions, l.skipped, l.err = c.readIndex(chart)
			if c.listed == nil {
				c.listed = map[string]listed{}
			}
			c.listed[chart] = l
		}
		return l.versions, l.skipped, l.err
	}
	for _, t := range c.tags {
		versions = append(versions, ChartVersion{Version: strings.ReplaceAll(t, "_", "+")})
	}
	return versions, nil, nil
}

// readIndex lists chart's versions from the index on disk.
func (c *Catalog) readIndex(chart string) (versions []ChartVersion, skipped []string, err error) {
	node, err := indexChartNode(c.indexPath, chart)
	if err != nil {
		return nil, nil, fmt.Errorf("index of %s: %w", redactURL(c.repo.URL), err)
	}
	if node == nil {
		return nil, nil, nil
	}
	if node.Kind != yaml.SequenceNode {
		return nil, nil, fmt.Errorf("index of %s: entries of %q are not a list (line %d)", redactURL(c.repo.URL), chart, node.Line)
	}
	for i, item := range node.Content {
		var e struct {
			Version    string `yaml:"version"`
			Deprecated bool   `yaml:"deprecated"`
		}
		if err := item.Decode(&e); err != nil || e.Version == "" {
			why := "no version"
			if err != nil {
				why = err.Error()
			}
			skipped = append(skipped, fmt.Sprintf("entry %d of %q (line %d of the index): %s", i+1, chart, item.Line, why))
			continue
		}
		versions = append(versions, ChartVersion{Version: e.Version, Deprecated: e.Deprecated})
	}
	return versions, skipped, nil
}

// ociChartConfig is the part of a Helm chart's OCI config blob (its
// Chart.yaml as JSON) convoy reads.
type ociChartConfig struct {
	Deprecated bool `json:"deprecated"`
}

// Deprecated reports whether the chart's Chart.yaml at version says
// deprecated: for an HTTP repository from the index entry, for OCI from
// the config blob of the version's manifest (two requests).
func (c *Catalog) Deprecated(ctx context.Context, chart, version string) (bool, error) {
	if c.indexPath == "" {
		repo := c.oci
		ref := strings.ReplaceAll(version, "+", "_")
		_, rc, err := repo.FetchReference(ctx, ref)
		if err != nil {
			return false, fmt.Errorf("oci://%s:%s: fetch manifest: %w", c.ociRef, ref, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, 4<<20+1))
		rc.Close()
		if err != nil || len(data) > 4<<20 {
			return false, fmt.Errorf("oci://%s:%s: manifest unreadable or larger than 4 MiB", c.ociRef, ref)
		}
		var m ocispec.Manifest
		if err := json.Unmarshal(data, &m); err != nil {
			return false, fmt.Errorf("oci://%s:%s: manifest: %w", c.ociRef, ref, err)
		}
		if m.Config.MediaType != ociConfigMediaType {
			return false, fmt.Errorf("oci://%s:%s is not a Helm chart (config media type %q)", c.ociRef, ref, m.Config.MediaType)
		}
		blob, err := repo.Blobs().Fetch(ctx, m.Config)
		if err != nil {
			return false, fmt.Errorf("oci://%s:%s: fetch config: %w", c.ociRef, ref, err)
		}
		defer blob.Close()
		var cfg ociChartConfig
		if err := json.NewDecoder(io.LimitReader(blob, 1<<20)).Decode(&cfg); err != nil {
			return false, fmt.Errorf("oci://%s:%s: config: %w", c.ociRef, ref, err)
		}
		return cfg.Deprecated, nil
	}
	vs, _, err := c.Versions(chart)
	if err != nil {
		return false, err
	}
	for _, v := range vs {
		if v.Version == version {
			return v.Deprecated, nil
		}
	}
	return false, nil
}
