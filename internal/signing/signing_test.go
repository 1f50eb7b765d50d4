package signing

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The payload is cosign's, byte for byte: the signature covers these
// bytes, so a verifier that re-encodes nothing accepts only these.
func TestPayloadIsCosigns(t *testing.T) {
	d := "sha256:" + strings.Repeat("ab", 32)
	for _, c := range []struct{ repo, ref string }{
		{"127.0.0.1:5000/stacks/shop", "127.0.0.1:5000/stacks/shop"},
		{"registry.example/a/b/c", "registry.example/a/b/c"},
		{"docker.io/team/shop", "index.docker.io/team/shop"},
		{"docker.io/shop", "index.docker.io/library/shop"},
	} {
		got, err := Payload(c.repo, d)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"critical":{"identity":{"docker-reference":"` + c.ref + `"},"image":{"docker-manifest-digest":"` + d + `"},"type":"cosign container image signature"},"optional":null}`
		if string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", c.repo, got, want)
		}
		claim, err := ParsePayload(got)
		if err != nil || claim.Digest != d || claim.DockerReference != c.ref {
			t.Errorf("%s: parsed back %+v, %v", c.repo, claim, err)
		}
	}
	if _, err := ParsePayload([]byte(`{"critical":{"type":"atomic container signature","image":{"docker-manifest-digest":"` + d + `"}}}`)); err == nil || !strings.Contains(err.Error(), `"atomic container signature"`) {
		t.Errorf("another payload type: %v", err)
	}
	if _, err := Payload("r/x", "sha256:nothex"); err == nil {
		t.Error("a malformed digest made a payload")
	}
	tag, err := SignatureTag(d)
	if err != nil || tag != "sha256-"+strings.Repeat("ab", 32)+".sig" {
		t.Errorf("SignatureTag: %q, %v", tag, err)
	}
}

// The private key formats: what openssl writes (PKCS#8 from genpkey, SEC 1
// from ecparam -genkey) and cosign's encrypted key (testdata/cosign.key,
// written by cosign generate-key-pair with the password "convoy-test").
// Each signs what its public key verifies.
func TestPrivateKeyFormats(t *testing.T) {
	payload, err := Payload("127.0.0.1:5000/stacks/shop", "sha256:"+strings.Repeat("01", 32))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key, pub, password string
	}{
		{key: "openssl-p256.key", pub: "openssl-p256.pub"},
		{key: "openssl-sec1.key"},
		{key: "cosign.key", pub: "cosign.pub", password: "convoy-test"},
	} {
		t.Run(c.key, func(t *testing.T) {
			var pw []byte
			if c.password != "" {
				pw = []byte(c.password)
			}
			k, err := ParsePrivateKey(read(t, c.key), pw)
			if err != nil {
				t.Fatal(err)
			}
			sig, err := k.Sign(payload)
			if err != nil {
				t.Fatal(err)
			}
			pub := k.Public()
			if c.pub != "" {
				keys, err := ParsePublicKeys(c.pub, read(t, c.pub))
				if err != nil || len(keys) != 1 {
					t.Fatalf("%s: %v", c.pub, err)
				}
				pub = keys[0]
			}
			if !pub.Verify(payload, sig) {
				t.Fatal("the public key does not verify the key's signature")
			}
			if pub.Verify(append([]byte(nil), append(payload, ' ')...), sig) {
				t.Fatal("a changed payload verifies")
			}
			other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if (&PublicKey{key: &other.PublicKey}).Verify(payload, sig) {
				t.Fatal("another key verifies")
			}
		})
	}
}

func TestPrivateKeyRefusals(t *testing.T) {
	cosignKey := read(t, "cosign.key")
	if _, err := ParsePrivateKey(cosignKey, nil); !errors.Is(err, ErrPasswordNeeded) {
		t.Errorf("encrypted key without a password: %v", err)
	}
	_, err := ParsePrivateKey(cosignKey, []byte("wrong"))
	if err == nil || !strings.Contains(err.Error(), "COSIGN_PASSWORD") {
		t.Errorf("encrypted key with a wrong password: %v", err)
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(p384)
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"ed25519", read(t, "ed25519.key"), "the key is Ed25519, not ECDSA P-256"},
		{"p384", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), "ECDSA on P-384, not P-256"},
		{"public", read(t, "openssl-p256.pub"), `a PEM "PUBLIC KEY" block is not a private key`},
		{"text", []byte("hello"), "not a PEM private key"},
	} {
		_, err := ParsePrivateKey(c.data, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestPublicKeys(t *testing.T) {
	two := append(read(t, "openssl-p256.pub"), read(t, "cosign.pub")...)
	keys, err := ParsePublicKeys("keys.pub", two)
	if err != nil || len(keys) != 2 || keys[0].Name != "keys.pub" || keys[1].Name != "keys.pub#2" {
		t.Fatalf("two keys in one file: %v, %v", keys, err)
	}
	if keys[0].Fingerprint() == keys[1].Fingerprint() {
		t.Error("two keys, one fingerprint")
	}
	for _, c := range []struct {
		data []byte
		want string
	}{
		{nil, "k.pub: no PEM PUBLIC KEY"},
		{read(t, "openssl-p256.key"), `k.pub: a PEM "PRIVATE KEY" block, want PUBLIC KEY`},
	} {
		_, err := ParsePublicKeys("k.pub", c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "MIG") {
			t.Errorf("the error quotes the key: %v", err)
		}
	}
}

// openssl, an implementation that shares no code with this one, verifies
// the signature as ECDSA-SHA256 over the payload's bytes.
func TestOpenSSLVerifiesTheSignature(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl is not installed")
	}
	k, err := ParsePrivateKey(read(t, "openssl-p256.key"), nil)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := Payload("127.0.0.1:5000/stacks/shop", "sha256:"+strings.Repeat("02", 32))
	sig, err := k.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out, err := exec.Command(openssl, "dgst", "-sha256", "-verify", filepath.Join("testdata", "openssl-p256.pub"),
		"-signature", write("sig", sig), write("payload", payload)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Verified OK") {
		t.Fatalf("openssl dgst -verify: %v\n%s", err, out)
	}
}
