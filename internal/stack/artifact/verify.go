package artifact

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/convoy-sh/convoy/internal/signing"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
)

// Verified is an artifact whose signature verified.
type Verified struct {
	// Ref is the artifact, pinned to its digest.
	Ref Ref
	// Key is the public key that verified it.
	Key *signing.PublicKey
}

// VerificationError says why an artifact is not admitted: unsigned,
// signed by no key given, or signed for another digest. The registry
// answered; a registry that did not answer is another error.
type VerificationError struct {
	Ref    Ref
	Reason string
}

func (e *VerificationError) Error() string { return e.Ref.String() + ": " + e.Reason }

// Verify checks that the artifact ref (which needs a digest) carries a
// cosign signature by one of keys of a payload naming that digest: the
// signatures under the tag sha256-<hex>.sig of its repository (cosign's
// place for them), as cosign verify --key checks them.
func Verify(ctx context.Context, reg Registry, ref Ref, keys []*signing.PublicKey) (*Verified, error) {
	if ref.Digest == "" {
		return nil, fmt.Errorf("%s: verify a digest", ref)
	}
	if len(keys) == 0 {
		return nil, errors.New("no public key to verify with")
	}
	tag, err := signing.SignatureTag(ref.Digest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	repo, err := reg.repository(ref)
	if err != nil {
		return nil, err
	}
	sigRef := Ref{Repository: ref.Repository, Tag: tag}
	m, err := fetchSignatureManifest(ctx, repo, sigRef)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, &VerificationError{Ref: ref, Reason: fmt.Sprintf("not signed: the repository has no signature tag %s", tag)}
	}
	if err != nil {
		return nil, err
	}
	var otherDigest []string
	checked := 0
	for i, l := range m.Layers {
		if l.MediaType != signing.PayloadMediaType {
			continue
		}
		checked++
		sig, err := base64.StdEncoding.DecodeString(l.Annotations[signing.SignatureAnnotation])
		if err != nil || len(sig) == 0 {
			continue
		}
		if l.Size < 0 || l.Size > maxSignaturePayload {
			continue
		}
		payload, err := fetchPayload(ctx, repo, l)
		if err != nil {
			return nil, fmt.Errorf("%s: signature %d: %w", sigRef, i+1, err)
		}
		for _, k := range keys {
			if !k.Verify(payload, sig) {
				continue
			}
			claim, err := signing.ParsePayload(payload)
			if err != nil {
				otherDigest = append(otherDigest, fmt.Sprintf("the signature by %s: %v", k.Name, err))
				continue
			}
			if claim.Digest != ref.Digest {
				otherDigest = append(otherDigest, fmt.Sprintf("the signature by %s is for %s, not for this digest", k.Name, claim.Digest))
				continue
			}
			return &Verified{Ref: ref, Key: k}, nil
		}
	}
	switch {
	case len(otherDigest) > 0:
		return nil, &VerificationError{Ref: ref, Reason: "signature for another artifact: " + strings.Join(otherDigest, "; ")}
	case checked == 0:
		return nil, &VerificationError{Ref: ref, Reason: fmt.Sprintf("not signed: the signature tag %s holds no cosign signature", tag)}
	default:
		return nil, &VerificationError{Ref: ref, Reason: fmt.Sprintf("signed by none of the keys (%d signature(s) under %s; keys %s)", checked, tag, keyNames(keys))}
	}
}

func fetchPayload(ctx context.Context, repo *remote.Repository, l ocispec.Descriptor) ([]byte, error) {
	rc, err := repo.Blobs().Fetch(ctx, l)
	if err != nil {
		return nil, fmt.Errorf("fetch the payload %s: %w", l.Digest, err)
	}
	defer rc.Close()
	vr := content.NewVerifyReader(rc, l)
	b, err := io.ReadAll(vr)
	if err == nil {
		err = vr.Verify()
	}
	if err != nil {
		return nil, fmt.Errorf("the payload %s: %w", l.Digest, err)
	}
	return b, nil
}

func keyNames(keys []*signing.PublicKey) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name + " (" + k.Fingerprint() + ")"
	}
	return strings.Join(names, ", ")
}
