package artifact

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/convoy-sh/convoy/internal/signing"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
)

// Bounds of what is read of a signature manifest.
const (
	maxSignatureLayers  = 64
	maxSignaturePayload = 64 << 10
)

// Signed is a signature stored for an artifact.
type Signed struct {
	// Tag is the signature tag (sha256-<hex>.sig) in the artifact's
	// repository.
	Tag string
	// Existing: the tag held a signature of this digest by this key
	// already, and nothing was pushed.
	Existing bool
	// Signatures counts the signatures under the tag.
	Signatures int
}

// Sign signs the artifact ref (which needs a digest) as cosign sign --key
// does: the simple signing payload of the digest, signed, stored as a
// layer of the OCI image manifest tagged sha256-<hex>.sig in the same
// repository, with the signature in the layer's annotation. The
// signatures already under the tag (other keys') are kept, and one by the
// same key for the same payload is not added twice.
func Sign(ctx context.Context, reg Registry, ref Ref, key *signing.PrivateKey) (*Signed, error) {
	if ref.Digest == "" {
		return nil, fmt.Errorf("%s: sign a digest", ref)
	}
	tag, err := signing.SignatureTag(ref.Digest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	payload, err := signing.Payload(ref.Repository, ref.Digest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	repo, err := reg.repository(ref)
	if err != nil {
		return nil, err
	}
	sigRef := Ref{Repository: ref.Repository, Tag: tag}
	m, err := fetchSignatureManifest(ctx, repo, sigRef)
	switch {
	case errors.Is(err, errdef.ErrNotFound):
		m = nil
	case err != nil:
		return nil, err
	}
	var layers []ocispec.Descriptor
	pd := digest.FromBytes(payload)
	if m != nil {
		layers = m.Layers
		for _, l := range m.Layers {
			if l.Digest != pd || l.MediaType != signing.PayloadMediaType {
				continue
			}
			sig, err := base64.StdEncoding.DecodeString(l.Annotations[signing.SignatureAnnotation])
			if err == nil && key.Public().Verify(payload, sig) {
				return &Signed{Tag: tag, Existing: true, Signatures: len(layers)}, nil
			}
		}
	}
	sig, err := key.Sign(payload)
	if err != nil {
		return nil, err
	}
	layer := content.NewDescriptorFromBytes(signing.PayloadMediaType, payload)
	layer.Annotations = map[string]string{signing.SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)}
	if err := pushBlob(ctx, repo, layer, payload); err != nil {
		return nil, fmt.Errorf("%s: push the signature payload: %w", sigRef, err)
	}
	layers = append(layers, layer)
	config, err := signatureConfig(layers)
	if err != nil {
		return nil, err
	}
	cdesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageConfig, config)
	if err := pushBlob(ctx, repo, cdesc, config); err != nil {
		return nil, fmt.Errorf("%s: push the signature config: %w", sigRef, err)
	}
	out := ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, Config: cdesc, Layers: layers}
	out.SchemaVersion = 2
	mb, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	mdesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, mb)
	if err := repo.PushReference(ctx, mdesc, bytes.NewReader(mb), tag); err != nil {
		return nil, fmt.Errorf("%s: push the signature manifest: %w", sigRef, err)
	}
	return &Signed{Tag: tag, Signatures: len(layers)}, nil
}

// signatureConfig is the image config of a signature manifest as
// go-containerregistry writes it for cosign: an empty image whose root
// file system is the payloads.
func signatureConfig(layers []ocispec.Descriptor) ([]byte, error) {
	type history struct {
		Created string `json:"created"`
	}
	c := struct {
		Architecture string    `json:"architecture"`
		Created      string    `json:"created"`
		History      []history `json:"history"`
		OS           string    `json:"os"`
		RootFS       struct {
			Type    string          `json:"type"`
			DiffIDs []digest.Digest `json:"diff_ids"`
		} `json:"rootfs"`
		Config struct{} `json:"config"`
	}{Created: "0001-01-01T00:00:00Z"}
	c.RootFS.Type = "layers"
	for _, l := range layers {
		c.History = append(c.History, history{Created: "0001-01-01T00:00:00Z"})
		c.RootFS.DiffIDs = append(c.RootFS.DiffIDs, l.Digest)
	}
	return json.Marshal(c)
}

// fetchSignatureManifest reads the signature manifest of a tag
// (errdef.ErrNotFound when there is none).
func fetchSignatureManifest(ctx context.Context, repo *remote.Repository, sigRef Ref) (*ocispec.Manifest, error) {
	desc, rc, err := repo.FetchReference(ctx, sigRef.Tag)
	if err != nil {
		if errors.Is(err, errdef.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: fetch the signature manifest: %w", sigRef, err)
	}
	defer rc.Close()
	if desc.Size > maxManifest {
		return nil, fmt.Errorf("%s: the signature manifest is larger than %d bytes", sigRef, maxManifest)
	}
	vr := content.NewVerifyReader(rc, desc)
	mb, err := io.ReadAll(vr)
	if err == nil {
		err = vr.Verify()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: the signature manifest: %w", sigRef, err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		return nil, fmt.Errorf("%s: the signature manifest: %w", sigRef, err)
	}
	if len(m.Layers) > maxSignatureLayers {
		return nil, fmt.Errorf("%s: the signature manifest has %d layers, more than %d", sigRef, len(m.Layers), maxSignatureLayers)
	}
	return &m, nil
}
