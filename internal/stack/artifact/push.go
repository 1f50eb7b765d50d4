package artifact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/convoy-sh/convoy/internal/chart/source"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
)

// Media types of a stack artifact.
const (
	ArtifactType   = "application/vnd.convoy.stack.v1"
	LayerMediaType = "application/vnd.convoy.stack.content.v1.tar+gzip"
	// AnnotationStackPath is the stack directory inside the archive.
	AnnotationStackPath = "dev.convoy.stack.path"
)

// Registry says how to reach registries: the chart resolver's transport,
// credential files and plain HTTP to loopback hosts, plus optional
// explicit credentials.
type Registry struct {
	Resolver *source.Resolver
	// Username and Password, when set, are used instead of the credential
	// files. They are secrets: never in errors.
	Username, Password string
	Limits             Limits
	// Recheck serves a digest the cache holds only once the registry has
	// served its manifest (of that digest) to this Registry's
	// credentials: a cache shared by tenants (the controller's) must not
	// give one what only another's credentials could pull.
	Recheck bool
}

func (r Registry) repository(ref Ref) (*remote.Repository, error) {
	res := r.Resolver
	if res == nil {
		res = &source.Resolver{}
	}
	return res.OCIRepository(source.Repository{URL: "oci://" + ref.Repository, Username: r.Username, Password: r.Password}, ref.Repository)
}

// Pushed is a pushed stack artifact.
type Pushed struct {
	// Ref is the reference pushed, pinned to Digest.
	Ref Ref
	// Digest is the manifest's digest: what a Stack's source pins.
	Digest string
	// Files counts the archive's entries; Size is the layer's size.
	Files int
	Size  int64
}

// Push packs the stack directory and pushes it to ref (which needs a tag).
// The same files give the same digest.
func Push(ctx context.Context, reg Registry, dir, refText string) (*Pushed, error) {
	ref, err := ParseRef(refText)
	if err != nil {
		return nil, err
	}
	if ref.Tag == "" || ref.Digest != "" {
		return nil, fmt.Errorf("%s: push to a tag (oci://registry/repository:tag); the digest is the result", refText)
	}
	p, err := pack(dir, reg.Limits)
	if err != nil {
		return nil, err
	}
	repo, err := reg.repository(ref)
	if err != nil {
		return nil, err
	}
	layer := content.NewDescriptorFromBytes(LayerMediaType, p.archive)
	layer.Annotations = map[string]string{ocispec.AnnotationTitle: "stack.tar.gz"}
	if err := pushBlob(ctx, repo, layer, p.archive); err != nil {
		return nil, fmt.Errorf("%s: push the stack layer: %w", ref, err)
	}
	if err := pushBlob(ctx, repo, ocispec.DescriptorEmptyJSON, ocispec.DescriptorEmptyJSON.Data); err != nil {
		return nil, fmt.Errorf("%s: push the config: %w", ref, err)
	}
	m := ocispec.Manifest{
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactType,
		Config:       ocispec.DescriptorEmptyJSON,
		Layers:       []ocispec.Descriptor{layer},
		Annotations:  map[string]string{AnnotationStackPath: p.stackPath},
	}
	m.SchemaVersion = 2
	mb, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	mdesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, mb)
	if err := repo.PushReference(ctx, mdesc, bytes.NewReader(mb), ref.Tag); err != nil {
		return nil, fmt.Errorf("%s: push the manifest: %w", ref, err)
	}
	d := mdesc.Digest.String()
	return &Pushed{Ref: ref.WithDigest(d), Digest: d, Files: p.files, Size: layer.Size}, nil
}

func pushBlob(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor, data []byte) error {
	if ok, err := repo.Blobs().Exists(ctx, desc); err == nil && ok {
		return nil
	}
	err := repo.Blobs().Push(ctx, desc, bytes.NewReader(data))
	if errors.Is(err, errdef.ErrAlreadyExists) {
		return nil
	}
	return err
}
