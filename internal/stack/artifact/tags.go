package artifact

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// ParseRepository parses oci://host/path, a repository without tag or
// digest (what a Pipeline follows).
func ParseRepository(s string) (Ref, error) {
	rest, ok := strings.CutPrefix(s, "oci://")
	if !ok {
		return Ref{}, fmt.Errorf("%q is not an OCI repository: write oci://registry/repository", s)
	}
	if strings.Contains(rest, "@") || strings.LastIndex(rest, ":") > strings.LastIndex(rest, "/") {
		return Ref{}, fmt.Errorf("%s: a repository, without tag or digest (oci://registry/repository)", s)
	}
	if _, err := registry.ParseReference(rest); err != nil {
		return Ref{}, fmt.Errorf("%s: %w", s, err)
	}
	return Ref{Repository: rest}, nil
}

// Tags lists the tags of a repository; one the registry does not know
// (nothing pushed yet) has none.
func Tags(ctx context.Context, reg Registry, repo Ref) ([]string, error) {
	r, err := reg.repository(repo)
	if err != nil {
		return nil, err
	}
	var out []string
	if err := r.Tags(ctx, "", func(tags []string) error {
		out = append(out, tags...)
		return nil
	}); err != nil {
		var re *errcode.ErrorResponse
		if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
			return nil, nil
		}
		return nil, fmt.Errorf("oci://%s: list the tags: %w", repo.Repository, err)
	}
	return out, nil
}

// Resolve returns the manifest digest a tag of a repository names.
func Resolve(ctx context.Context, reg Registry, repo Ref, tag string) (string, error) {
	r, err := reg.repository(repo)
	if err != nil {
		return "", err
	}
	desc, err := r.Resolve(ctx, tag)
	if err != nil {
		return "", fmt.Errorf("oci://%s:%s: resolve the tag: %w", repo.Repository, tag, err)
	}
	return desc.Digest.String(), nil
}
