package signing

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/opencontainers/go-digest"
)

// Cosign's names for what it stores (cosign pkg/types, pkg/oci/static).
const (
	// PayloadMediaType is the media type of a signature layer: the
	// payload.
	PayloadMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	// SignatureAnnotation on the layer is the base64 signature of the
	// payload.
	SignatureAnnotation = "dev.cosignproject.cosign/signature"
	// SignatureType is the payload's critical.type.
	SignatureType = "cosign container image signature"
)

// simpleSigning is the "simple signing" payload as cosign writes it
// (sigstore pkg/signature/payload): the field order is the JSON's.
type simpleSigning struct {
	Critical critical       `json:"critical"`
	Optional map[string]any `json:"optional"`
}

type critical struct {
	Identity struct {
		DockerReference string `json:"docker-reference"`
	} `json:"identity"`
	Image struct {
		DockerManifestDigest string `json:"docker-manifest-digest"`
	} `json:"image"`
	Type string `json:"type"`
}

// Payload is the payload that signs the manifest digest d of repository
// (host/path), byte for byte what cosign sign writes for it.
func Payload(repository, d string) ([]byte, error) {
	if _, err := digest.Parse(d); err != nil {
		return nil, fmt.Errorf("%q: %w", d, err)
	}
	var p simpleSigning
	p.Critical.Identity.DockerReference = DockerReference(repository)
	p.Critical.Image.DockerManifestDigest = d
	p.Critical.Type = SignatureType
	return json.Marshal(p)
}

// Claim is what a payload says it signs.
type Claim struct {
	DockerReference string
	Digest          string
}

// ParsePayload reads a payload; one of another type is refused.
func ParsePayload(b []byte) (Claim, error) {
	var p simpleSigning
	if err := json.Unmarshal(b, &p); err != nil {
		return Claim{}, fmt.Errorf("the signed payload is not a simple signing document: %w", err)
	}
	if p.Critical.Type != SignatureType {
		return Claim{}, fmt.Errorf("the signed payload is of type %q, not %q", p.Critical.Type, SignatureType)
	}
	return Claim{DockerReference: p.Critical.Identity.DockerReference, Digest: p.Critical.Image.DockerManifestDigest}, nil
}

// DockerReference is the repository as cosign names it in a payload
// (go-containerregistry's Repository.Name): Docker Hub is
// index.docker.io, and its one-part names are under library/.
func DockerReference(repository string) string {
	host, path, ok := strings.Cut(repository, "/")
	if !ok {
		return repository
	}
	switch host {
	case "docker.io", "registry-1.docker.io", "index.docker.io":
		if !strings.Contains(path, "/") {
			path = "library/" + path
		}
		return "index.docker.io/" + path
	}
	return repository
}

// SignatureTag is the tag cosign stores the signatures of manifest digest
// d under, in the artifact's own repository: sha256-<hex>.sig.
func SignatureTag(d string) (string, error) {
	dg, err := digest.Parse(d)
	if err != nil {
		return "", fmt.Errorf("%q: %w", d, err)
	}
	return string(dg.Algorithm()) + "-" + dg.Encoded() + ".sig", nil
}

// Sign signs payload: ECDSA over its SHA-256, ASN.1 DER, as sigstore's
// ECDSA signer does.
func (k *PrivateKey) Sign(payload []byte) ([]byte, error) {
	h := sha256.Sum256(payload)
	return ecdsa.SignASN1(rand.Reader, k.key, h[:])
}

// Verify says whether sig is the key's signature of payload.
func (k *PublicKey) Verify(payload, sig []byte) bool {
	h := sha256.Sum256(payload)
	return ecdsa.VerifyASN1(k.key, h[:], sig)
}
