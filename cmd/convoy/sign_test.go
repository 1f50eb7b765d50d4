package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/devcluster"
)

// opensslKey writes a P-256 key pair as openssl genpkey and openssl pkey
// -pubout write them (PKCS#8 "PRIVATE KEY", PKIX "PUBLIC KEY").
func opensslKey(t *testing.T, dir string) (key, pub string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	pubDER, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	key, pub = filepath.Join(dir, "openssl.key"), filepath.Join(dir, "openssl.pub")
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return key, pub
}

// cosignCmd runs the cosign oracle offline: no transparency log, no
// signing config fetched, its TUF cache in a temporary directory.
func cosignCmd(t *testing.T, bin, password string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "COSIGN_PASSWORD="+password, "HOME="+home, "TUF_ROOT="+filepath.Join(home, "tuf"), "COSIGN_EXPERIMENTAL=0")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// convoy push --sign-key signs in cosign's format: cosign verify --key (the
// oracle, built from the Go module proxy) accepts what convoy signed with
// an openssl key and with cosign's own encrypted key (COSIGN_PASSWORD),
// and refuses it with another key; convoy verify accepts what cosign sign
// --key signed, and refuses an unsigned artifact and a wrong key.
func TestSignedPushCosignOracle(t *testing.T) {
	reg := sourcetest.StartRegistry(t, "", "") // skipped by -short
	cosign, err := devcluster.LocateCosign(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	keys := t.TempDir()
	const password = "convoy-oracle"
	if out, err := cosignCmd(t, cosign, password, "generate-key-pair", "--output-key-prefix", filepath.Join(keys, "cosign")); err != nil {
		t.Fatalf("cosign generate-key-pair: %v\n%s", err, out)
	}
	cosignKey, cosignPub := filepath.Join(keys, "cosign.key"), filepath.Join(keys, "cosign.pub")
	sslKey, sslPub := opensslKey(t, keys)
	base := "oci://" + reg.Host + "/stacks/shop"
	digestLine := regexp.MustCompile(`^(sha256:[0-9a-f]{64})\n$`)

	push := func(message, tag string, args ...string) string {
		t.Helper()
		dir := writeStack(t, "stack \"shop\" {}\nvariable \"m\" {\n  default = \""+message+"\"\n}\n")
		code, out, errOut := runConvoy(t, append([]string{"push", dir, base + ":" + tag}, args...)...)
		m := digestLine.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("push %s: exit %d\n%s\n%s", tag, code, out, errOut)
		}
		return m[1]
	}
	cosignVerify := func(digest, pub string) (string, error) {
		return cosignCmd(t, cosign, "", "verify", "--key", pub, "--insecure-ignore-tlog=true", "--allow-http-registry", reg.Host+"/stacks/shop@"+digest)
	}

	// Signed by convoy with the cosign key: the password is needed.
	dir := writeStack(t, "stack \"shop\" {}\n")
	code, _, errOut := runConvoy(t, "push", dir, base+":nopw", "--sign-key", cosignKey)
	if code != 1 || !strings.Contains(errOut, "the key is encrypted: set COSIGN_PASSWORD") {
		t.Fatalf("an encrypted key without COSIGN_PASSWORD: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := runConvoy(t, "verify", base+":nopw", "--key", cosignPub); code != 1 || !strings.Contains(errOut, "resolve the tag") {
		t.Fatalf("the key was refused, yet the artifact was pushed: exit %d\n%s", code, errOut)
	}
	t.Setenv("COSIGN_PASSWORD", password)
	v1 := push("v1", "v1", "--sign-key", cosignKey)
	if out, err := cosignVerify(v1, cosignPub); err != nil || !strings.Contains(out, `"docker-manifest-digest":"`+v1+`"`) {
		t.Fatalf("cosign verify of convoy's signature (cosign key): %v\n%s", err, out)
	}
	if out, err := cosignVerify(v1, sslPub); err == nil {
		t.Fatalf("cosign verify accepted another key:\n%s", out)
	}

	// Signed by convoy with an openssl key.
	v2 := push("v2", "v2", "--sign-key", sslKey)
	if out, err := cosignVerify(v2, sslPub); err != nil {
		t.Fatalf("cosign verify of convoy's signature (openssl key): %v\n%s", err, out)
	}
	code, out, errOut := runConvoy(t, "verify", base+":v2", "--key", cosignPub, "--key", sslPub)
	if code != 0 || out != v2+"\n" || !strings.Contains(errOut, "signed by "+sslPub) {
		t.Fatalf("convoy verify v2: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runConvoy(t, "verify", base+":v2", "--key", cosignPub)
	if code != 1 || !strings.Contains(errOut, "signed by none of the keys") {
		t.Fatalf("convoy verify v2 with another key: exit %d\n%s", code, errOut)
	}

	// Unsigned, then signed by cosign: convoy verify refuses, then accepts.
	v3 := push("v3", "v3")
	code, _, errOut = runConvoy(t, "verify", base+":v3", "--key", cosignPub)
	if code != 1 || !strings.Contains(errOut, v3+": not signed") {
		t.Fatalf("convoy verify of an unsigned artifact: exit %d\n%s", code, errOut)
	}
	if out, err := cosignCmd(t, cosign, password, "sign", "--key", cosignKey, "--tlog-upload=false", "--use-signing-config=false",
		"--new-bundle-format=false", "--allow-http-registry", "-y", reg.Host+"/stacks/shop@"+v3); err != nil {
		t.Fatalf("cosign sign: %v\n%s", err, out)
	}
	code, out, errOut = runConvoy(t, "verify", base+"@"+v3, "--key", cosignPub)
	if code != 0 || out != v3+"\n" {
		t.Fatalf("convoy verify of cosign's signature: exit %d\n%s\n%s", code, out, errOut)
	}
	// convoy adds its signature beside cosign's: cosign verifies both.
	if again := push("v3", "v3-again", "--sign-key", sslKey); again != v3 {
		t.Fatalf("the same files pushed again: %s, then %s", v3, again)
	}
	for _, pub := range []string{cosignPub, sslPub} {
		if out, err := cosignVerify(v3, pub); err != nil {
			t.Errorf("cosign verify with %s after convoy signed beside cosign: %v\n%s", filepath.Base(pub), err, out)
		}
	}
}
