package artifact

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/signing"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// newKey is a fresh P-256 key pair, the public half named name.
func newKey(t *testing.T, name string) (*signing.PrivateKey, *signing.PublicKey) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := signing.ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil)
	if err != nil {
		t.Fatal(err)
	}
	pemPub, err := priv.Public().PEM()
	if err != nil {
		t.Fatal(err)
	}
	pubs, err := signing.ParsePublicKeys(name, pemPub)
	if err != nil {
		t.Fatal(err)
	}
	return priv, pubs[0]
}

func wantRefused(t *testing.T, err error, want string) {
	t.Helper()
	var ve *VerificationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), want) {
		t.Fatalf("verify: %v, want a VerificationError saying %q", err, want)
	}
}

// Signing against the real registry: a pushed and signed artifact
// verifies with its key; an unsigned one, one signed by another key and
// one whose signature tag holds another digest's signature are refused,
// each saying so. Signing again with the same key adds nothing; a second
// key adds its signature beside the first.
func TestSignVerify(t *testing.T) {
	ctx := context.Background()
	reg := sourcetest.StartRegistry(t, "", "")
	_, dir := monorepo(t)
	base := "oci://" + reg.Host + "/stacks/shop"
	signed, err := Push(ctx, Registry{}, dir, base+":v1")
	if err != nil {
		t.Fatal(err)
	}
	priv, pub := newKey(t, "cosign.pub")
	otherPriv, otherPub := newKey(t, "other.pub")

	s, err := Sign(ctx, Registry{}, signed.Ref, priv)
	if err != nil {
		t.Fatal(err)
	}
	wantTag := "sha256-" + strings.TrimPrefix(signed.Digest, "sha256:") + ".sig"
	if s.Tag != wantTag || s.Existing || s.Signatures != 1 {
		t.Fatalf("signed: %+v, want tag %s", s, wantTag)
	}
	v, err := Verify(ctx, Registry{}, signed.Ref, []*signing.PublicKey{otherPub, pub})
	if err != nil {
		t.Fatal(err)
	}
	if v.Key != pub || v.Ref.Digest != signed.Digest {
		t.Fatalf("verified by %s for %s", v.Key.Name, v.Ref)
	}
	_, err = Verify(ctx, Registry{}, signed.Ref, []*signing.PublicKey{otherPub})
	wantRefused(t, err, "signed by none of the keys (1 signature(s) under "+wantTag+"; keys other.pub (sha256:")

	// The stored form is cosign's: an OCI image manifest, one layer per
	// signature holding the payload, the signature in its annotation.
	m := signatureManifest(t, reg.Host, wantTag)
	if m.MediaType != ocispec.MediaTypeImageManifest || m.Config.MediaType != ocispec.MediaTypeImageConfig || len(m.Layers) != 1 {
		t.Fatalf("signature manifest %+v", m)
	}
	l := m.Layers[0]
	payload := blob(t, reg.Host, l)
	wantPayload, _ := signing.Payload(reg.Host+"/stacks/shop", signed.Digest)
	if l.MediaType != "application/vnd.dev.cosign.simplesigning.v1+json" || !bytes.Equal(payload, wantPayload) || l.Annotations["dev.cosignproject.cosign/signature"] == "" {
		t.Fatalf("signature layer %+v, payload %s", l, payload)
	}

	// Signing again with the same key adds nothing; another key adds
	// its signature, and either key verifies.
	if s, err = Sign(ctx, Registry{}, signed.Ref, priv); err != nil || !s.Existing || s.Signatures != 1 {
		t.Fatalf("signed again: %+v, %v", s, err)
	}
	if s, err = Sign(ctx, Registry{}, signed.Ref, otherPriv); err != nil || s.Existing || s.Signatures != 2 {
		t.Fatalf("signed with a second key: %+v, %v", s, err)
	}
	for _, k := range []*signing.PublicKey{pub, otherPub} {
		if v, err := Verify(ctx, Registry{}, signed.Ref, []*signing.PublicKey{k}); err != nil || v.Key != k {
			t.Errorf("with two signatures, %s: %v", k.Name, err)
		}
	}

	// Unsigned.
	write(t, dir, map[string]string{"values/api.yaml": "replicas: 9\n"})
	unsigned, err := Push(ctx, Registry{}, dir, base+":v2")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Verify(ctx, Registry{}, unsigned.Ref, []*signing.PublicKey{pub})
	wantRefused(t, err, unsigned.Digest+": not signed: the repository has no signature tag sha256-")

	// Another digest's signature copied under this digest's tag: the
	// key's signature verifies, but for the other digest.
	copyTag(t, reg.Host, "stacks/shop", wantTag, "sha256-"+strings.TrimPrefix(unsigned.Digest, "sha256:")+".sig")
	_, err = Verify(ctx, Registry{}, unsigned.Ref, []*signing.PublicKey{pub})
	wantRefused(t, err, "signature for another artifact: the signature by cosign.pub is for "+signed.Digest+", not for this digest")
}

// signatureManifest reads a manifest by tag.
func signatureManifest(t *testing.T, host, tag string) ocispec.Manifest {
	t.Helper()
	repo, err := Registry{}.repository(Ref{Repository: host + "/stacks/shop", Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	_, rc, err := repo.FetchReference(context.Background(), tag)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var m ocispec.Manifest
	if err := json.NewDecoder(rc).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func blob(t *testing.T, host string, d ocispec.Descriptor) []byte {
	t.Helper()
	repo, err := Registry{}.repository(Ref{Repository: host + "/stacks/shop", Tag: "x"})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := repo.Blobs().Fetch(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// copyTag tags the manifest of tag from as to, as someone with push
// rights to the repository could.
func copyTag(t *testing.T, host, path, from, to string) {
	t.Helper()
	ctx := context.Background()
	repo, err := Registry{}.repository(Ref{Repository: host + "/" + path, Tag: from})
	if err != nil {
		t.Fatal(err)
	}
	desc, rc, err := repo.FetchReference(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.PushReference(ctx, desc, bytes.NewReader(b), to); err != nil {
		t.Fatal(err)
	}
}
