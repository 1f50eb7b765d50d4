package artifact

import (
	"fmt"
	"strings"

	"oras.land/oras-go/v2/registry"
)

// Ref is a parsed oci:// stack reference: a repository with a tag, a
// digest, or both (the digest wins).
type Ref struct {
	// Repository is host[:port]/path.
	Repository string
	Tag        string
	Digest     string
}

// ParseRef parses oci://host/path:tag, oci://host/path@sha256:… or
// oci://host/path:tag@sha256:….
func ParseRef(s string) (Ref, error) {
	rest, ok := strings.CutPrefix(s, "oci://")
	if !ok {
		return Ref{}, fmt.Errorf("%q is not an OCI reference: write oci://registry/repository:tag or …@sha256:…", s)
	}
	var r Ref
	rest, r.Digest, _ = strings.Cut(rest, "@")
	if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		rest, r.Tag = rest[:i], rest[i+1:]
	}
	r.Repository = rest
	check := rest
	switch {
	case r.Digest != "":
		check += "@" + r.Digest
	case r.Tag != "":
		check += ":" + r.Tag
	default:
		return Ref{}, fmt.Errorf("%s: give a tag (:v1) or a digest (@sha256:…)", s)
	}
	if _, err := registry.ParseReference(check); err != nil {
		return Ref{}, fmt.Errorf("%s: %w", s, err)
	}
	if r.Tag != "" {
		if _, err := registry.ParseReference(rest + ":" + r.Tag); err != nil {
			return Ref{}, fmt.Errorf("%s: %w", s, err)
		}
	}
	return r, nil
}

// reference is what to ask the registry for: the digest, else the tag.
func (r Ref) reference() string {
	if r.Digest != "" {
		return r.Digest
	}
	return r.Tag
}

func (r Ref) String() string {
	s := "oci://" + r.Repository
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// WithDigest is the reference pinned to a digest.
func (r Ref) WithDigest(d string) Ref {
	r.Digest = d
	return r
}
