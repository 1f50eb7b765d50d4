package source

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
)

// Resolver resolves chart references to archives in the cache. Its fields
// are settings, never changed by its methods; a Resolver is safe for
// concurrent use.
type Resolver struct {
	Cache Cache
	// Timeout bounds each request (headers and body); 0 means 5 minutes.
	Timeout time.Duration
	// MaxArchiveBytes bounds a downloaded archive; 0 means 100 MiB (the
	// chart engine's own limit on a whole chart).
	MaxArchiveBytes int64
	// MaxIndexBytes bounds a repository index; 0 means 256 MiB.
	MaxIndexBytes int64
	// RegistryConfigs are credential files tried, in order, for OCI
	// registries when the repository block gives no credentials (Helm's
	// registry config, then Docker's config with its credential helpers).
	RegistryConfigs []string
	// Warn receives warnings (such as disabled TLS verification); nil
	// discards them.
	Warn io.Writer
	// Access, if set, makes Authorize prove the credentials may read a
	// cached chart before it is served (a cache shared by tenants).
	Access *Access
}

func (res *Resolver) warnf(format string, args ...any) {
	if res.Warn != nil {
		fmt.Fprintf(res.Warn, format+"\n", args...)
	}
}

func (res *Resolver) maxArchive() int64 {
	if res.MaxArchiveBytes > 0 {
		return res.MaxArchiveBytes
	}
	return chart.DefaultMaxBytes
}

func (res *Resolver) maxIndex() int64 {
	if res.MaxIndexBytes > 0 {
		return res.MaxIndexBytes
	}
	return 256 << 20
}

// Request names one chart to resolve.
type Request struct {
	Repository Repository
	// Chart is the chart's name in an HTTP repository, or for OCI the path
	// below Repository.URL (empty when Repository.URL is the whole
	// oci://host/path/chart reference, optionally @sha256:…).
	Chart string
	// Constraint is a semver constraint; "" means the highest release.
	Constraint string
}

// Resolved is a chart pinned to one archive.
type Resolved struct {
	// Source is where it came from: the repository URL or the OCI
	// reference (oci://host/path/chart).
	Source  string
	Name    string
	Version string
	// Digest is the sha256 of the archive, the cache key.
	Digest string
	// Manifest is the OCI manifest digest ("" for HTTP repositories).
	Manifest string
	// Dependencies are subcharts fetched because the archive's charts/
	// lacked them (what `helm dependency build` would add).
	Dependencies []Resolved
}

func (r Request) describe() string {
	c := cmp.Or(r.Constraint, "latest")
	if r.Chart == "" {
		return fmt.Sprintf("chart %s (version %s)", redactURL(r.Repository.URL), c)
	}
	return fmt.Sprintf("chart %q (version %s) from %s", r.Chart, c, r.Repository.label())
}

// Resolve picks the version req asks for, downloads its archive into the
// cache unless it is already there, and resolves dependencies missing
// from the archive's charts/.
func (res *Resolver) Resolve(ctx context.Context, req Request) (Resolved, error) {
	var (
		r   Resolved
		err error
	)
	if strings.HasPrefix(req.Repository.URL, "oci://") {
		r, err = res.resolveOCI(ctx, req)
	} else {
		r, err = res.resolveHTTP(ctx, req)
	}
	if err != nil {
		return Resolved{}, err
	}
	deps, err := res.resolveDependencies(ctx, req, r)
	if err != nil {
		return Resolved{}, err
	}
	r.Dependencies = deps
	// Sources are recorded in lock files: never with a password written
	// into the URL.
	r.Source = redactURL(r.Source)
	return r, nil
}

// checkArchive is run on a downloaded archive before it enters the cache:
// it must load as a chart (gzip, no traversal paths, within limits) of the
// expected name and, if given, version.
func checkArchive(name, version string) func(path string) error {
	return func(path string) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		ch, err := chart.LoadArchive(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("not a valid chart archive: %w", err)
		}
		if name != "" && ch.Metadata.Name != name {
			return fmt.Errorf("the archive holds chart %q, not %q", ch.Metadata.Name, name)
		}
		if version != "" && ch.Metadata.Version != version {
			return fmt.Errorf("the archive holds version %s, not %s", ch.Metadata.Version, version)
		}
		return nil
	}
}
