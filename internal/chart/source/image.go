package source

import (
	"context"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// ImageRef is a container image reference as a manifest names it, split:
// nginx:1.27 is registry docker.io, repository library/nginx, tag 1.27.
type ImageRef struct {
	Registry, Repository, Tag, Digest string
}

// Name is the image's repository with its registry (docker.io/library/nginx).
func (r ImageRef) Name() string { return r.Registry + "/" + r.Repository }

// ParseImage splits a reference the way container runtimes read it: the
// first path component is a registry when it holds a dot or a colon or is
// localhost, else the image is Docker Hub's (library/ for one component);
// no tag and no digest is tag latest.
func ParseImage(s string) (ImageRef, error) {
	var r ImageRef
	rest := s
	if i := strings.Index(rest, "@"); i >= 0 {
		rest, r.Digest = rest[:i], rest[i+1:]
	}
	if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		rest, r.Tag = rest[:i], rest[i+1:]
	}
	if rest == "" || strings.ContainsAny(rest, " \t\n") || strings.HasPrefix(rest, "/") || strings.HasSuffix(rest, "/") || strings.Contains(rest, "//") {
		return ImageRef{}, fmt.Errorf("%q is not an image reference", s)
	}
	first, path, ok := strings.Cut(rest, "/")
	if ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		r.Registry, r.Repository = first, path
	} else {
		r.Registry, r.Repository = "docker.io", rest
		if !ok {
			r.Repository = "library/" + rest
		}
	}
	if r.Tag == "" && r.Digest == "" {
		r.Tag = "latest"
	}
	if r.Repository != strings.ToLower(r.Repository) {
		return ImageRef{}, fmt.Errorf("%q is not an image reference: a repository is lower case", s)
	}
	return r, nil
}

// ImageTags lists every tag of an image's repository (all pages), with
// the registry credentials convoy reads for charts (Docker's config and
// its helpers, Helm's registry config). A loopback registry is spoken to
// over plain HTTP.
func (res *Resolver) ImageTags(ctx context.Context, img ImageRef) ([]string, error) {
	host := img.Registry
	if host == "docker.io" {
		host = "registry-1.docker.io"
	}
	repoRef := host + "/" + img.Repository
	repo, err := res.ociRepository(Request{Repository: Repository{URL: "oci://" + repoRef}}, repoRef)
	if err != nil {
		return nil, err
	}
	var tags []string
	err = repo.Tags(ctx, "", func(page []string) error {
		tags = append(tags, page...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: list tags: %w%s", img.Name(), err, ociHint(err))
	}
	return tags, nil
}

// NewerImageTag is the newest tag of tags that is a newer version of the
// same major as tag ("" when none is, or when tag is no version). Only
// MAJOR.MINOR.PATCH tags count (a leading v allowed, kept as tag writes
// it): latest, main, nightlies, dates and digests-as-tags never do, and
// pre-releases only when tag is one.
func NewerImageTag(tag string, tags []string) string {
	cur, ok := Candidate(tag, true)
	if !ok {
		return ""
	}
	pre := cur.Prerelease() != ""
	var best *semver.Version
	newest := ""
	for _, t := range tags {
		if strings.HasPrefix(tag, "v") != strings.HasPrefix(t, "v") {
			continue // another series of tags
		}
		v, ok := Candidate(t, pre)
		if !ok || v.Major() != cur.Major() || !v.GreaterThan(cur) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, newest = v, t
		}
	}
	return newest
}
