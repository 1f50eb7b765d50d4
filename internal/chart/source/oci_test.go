package source_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry/remote"
)

func TestOCIRegistry(t *testing.T) {
	reg := sourcetest.StartRegistry(t, "", "")
	out := t.TempDir()
	var digests = map[string]string{}
	for _, v := range []string{"1.2.0", "1.4.0", "2.0.0", "1.5.0-rc.1", "1.3.0+build.7"} {
		digests[v] = reg.Push(t, sourcetest.Package(t, out, "api", v), "charts")
	}
	ctx := context.Background()
	res := newResolver(t)
	ref := "oci://" + reg.Host + "/charts/api"

	for _, tc := range []struct{ constraint, want string }{
		{"^1.2.0", "1.4.0"},
		{"", "2.0.0"},
		{"~1.3", "1.3.0+build.7"}, // "+" is "_" in the tag, as Helm pushes it
		{"^1.5.0-0", "1.5.0-rc.1"},
	} {
		t.Run(tc.constraint, func(t *testing.T) {
			got, err := res.Resolve(ctx, source.Request{Repository: source.Repository{URL: ref}, Constraint: tc.constraint})
			if err != nil {
				t.Fatal(err)
			}
			archive := filepath.Join(out, "api-"+tc.want+".tgz")
			if got.Version != tc.want || got.Source != ref || got.Manifest != digests[tc.want] || got.Digest != fileDigest(t, archive) {
				t.Fatalf("got %+v, want %s (manifest %s, layer %s)", got, tc.want, digests[tc.want], fileDigest(t, archive))
			}
		})
	}

	t.Run("by digest", func(t *testing.T) {
		got, err := res.Resolve(ctx, source.Request{Repository: source.Repository{URL: ref + "@" + digests["1.2.0"]}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != "1.2.0" || got.Manifest != digests["1.2.0"] {
			t.Fatalf("got %+v", got)
		}
		_, err = res.Resolve(ctx, source.Request{Repository: source.Repository{URL: ref + "@" + digests["1.2.0"]}, Constraint: "^2.0.0"})
		if err == nil || !strings.Contains(err.Error(), "is version 1.2.0, which the constraint does not admit") {
			t.Fatalf("digest outside the constraint: %v", err)
		}
	})

	t.Run("a repository block", func(t *testing.T) {
		got, err := res.Resolve(ctx, source.Request{Repository: source.Repository{Name: "oci", URL: "oci://" + reg.Host + "/charts"}, Chart: "api", Constraint: "~1.2"})
		if err != nil || got.Version != "1.2.0" {
			t.Fatalf("got %+v, %v", got, err)
		}
	})

	t.Run("no match names the versions", func(t *testing.T) {
		_, err := res.Resolve(ctx, source.Request{Repository: source.Repository{URL: ref}, Constraint: ">=3"})
		if err == nil || !strings.Contains(err.Error(), "available: 2.0.0, 1.5.0-rc.1, 1.4.0, 1.3.0+build.7, 1.2.0") || !strings.Contains(err.Error(), ref) {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("cached layers are not fetched again", func(t *testing.T) {
		before := reg.Requests()
		if _, err := res.Resolve(ctx, source.Request{Repository: source.Repository{URL: ref}, Constraint: "^1.2.0"}); err != nil {
			t.Fatal(err)
		}
		// tags list + manifest; no blob
		if n := reg.Requests() - before; n > 2 {
			t.Fatalf("%d requests for a cached chart", n)
		}
	})
}

func TestOCIRegistryAuth(t *testing.T) {
	const user, password = "ci", "s3cret-registry"
	reg := sourcetest.StartRegistry(t, user, password)
	reg.Push(t, sourcetest.Package(t, t.TempDir(), "api", "1.0.0"), "charts")
	ref := "oci://" + reg.Host + "/charts/api"
	ctx := context.Background()

	t.Run("repository credentials", func(t *testing.T) {
		if _, err := newResolver(t).Resolve(ctx, source.Request{Repository: source.Repository{URL: ref, Username: user, Password: password}}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		_, err := newResolver(t).Resolve(ctx, source.Request{Repository: source.Repository{URL: ref, Username: user, Password: "wrong-s3cret"}})
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "the registry wants credentials") {
			t.Fatalf("want an error without the password, got %v", err)
		}
	})
	t.Run("docker config", func(t *testing.T) {
		dir := t.TempDir()
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
		cfg := filepath.Join(dir, "config.json")
		os.WriteFile(cfg, []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.Host, auth)), 0o600)
		res := newResolver(t)
		res.RegistryConfigs = []string{filepath.Join(dir, "missing.json"), cfg}
		if _, err := res.Resolve(ctx, source.Request{Repository: source.Repository{URL: ref}}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("no credentials", func(t *testing.T) {
		_, err := newResolver(t).Resolve(ctx, source.Request{Repository: source.Repository{URL: ref}})
		if err == nil || !strings.Contains(err.Error(), "the registry wants credentials") {
			t.Fatalf("want unauthorized, got %v", err)
		}
	})
}

// pushArtifact pushes a manifest with the given config media type and one
// layer straight through the registry API (oras-go), tagged tag.
func pushArtifact(t *testing.T, reg *sourcetest.Registry, repoPath, tag, configType, layerType string, layer []byte) {
	t.Helper()
	ctx := context.Background()
	repo, err := remote.NewRepository(reg.Direct + "/" + repoPath)
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	layerDesc, err := oras.PushBytes(ctx, repo, layerType, layer)
	if err != nil {
		t.Fatal(err)
	}
	configDesc, err := oras.PushBytes(ctx, repo, configType, []byte(`{"name":"api","version":"1.0.0"}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{
		Layers: []ocispec.Descriptor{layerDesc}, ConfigDescriptor: &configDesc,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, m, tag); err != nil {
		t.Fatal(err)
	}
}

func TestHostileRegistryArtifacts(t *testing.T) {
	reg := sourcetest.StartRegistry(t, "", "")
	good, err := os.ReadFile(sourcetest.Package(t, t.TempDir(), "api", "1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := os.ReadFile(sourcetest.Package(t, t.TempDir(), "other", "1.0.0"))
	for _, tc := range []struct {
		name, configType, layerType string
		layer                       []byte
		want                        string
	}{
		{"not a helm chart", "application/vnd.oci.image.config.v1+json", "application/vnd.oci.image.layer.v1.tar+gzip", good, "is not a Helm chart"},
		{"no chart layer", "application/vnd.cncf.helm.config.v1+json", "application/vnd.cncf.helm.chart.provenance.v1.prov", []byte("prov"), "has no chart layer"},
		{"not gzip", "application/vnd.cncf.helm.config.v1+json", "application/vnd.cncf.helm.chart.content.v1.tar+gzip", []byte("not gzip"), "not a valid chart archive"},
		{"another chart", "application/vnd.cncf.helm.config.v1+json", "application/vnd.cncf.helm.chart.content.v1.tar+gzip", other, `holds chart "other"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "hostile/" + strings.ReplaceAll(tc.name, " ", "-") + "/api"
			pushArtifact(t, reg, path, "1.0.0", tc.configType, tc.layerType, tc.layer)
			res := newResolver(t)
			_, err := res.Resolve(context.Background(), source.Request{Repository: source.Repository{URL: "oci://" + reg.Host + "/" + path}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
			if entries, _ := os.ReadDir(filepath.Join(res.Cache.Dir, "sha256")); len(entries) != 0 {
				t.Fatalf("cache holds %v after a refused chart", entries)
			}
		})
	}
}

// writeServerCert writes a self-signed certificate for 127.0.0.1 (its own
// CA) and its key.
func writeServerCert(t *testing.T, dir string) (string, string) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	cert, keyFile := filepath.Join(dir, "registry.pem"), filepath.Join(dir, "registry-key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	return cert, keyFile
}

func TestOCIRegistryOverTLS(t *testing.T) {
	cert, key := writeServerCert(t, t.TempDir())
	reg := sourcetest.StartRegistryWith(t, sourcetest.RegistryOptions{TLSCert: cert, TLSKey: key, Username: "ci", Password: "tls-s3cret"})
	reg.Push(t, sourcetest.Package(t, t.TempDir(), "api", "1.0.0"), "charts")
	ref := "oci://" + reg.Host + "/charts/api"
	ctx := context.Background()
	if _, err := newResolver(t).Resolve(ctx, source.Request{Repository: source.Repository{URL: ref, CAFile: cert, Username: "ci", Password: "tls-s3cret"}}); err != nil {
		t.Fatalf("with ca_file: %v", err)
	}
	var warn strings.Builder
	res := newResolver(t)
	res.Warn = &warn
	if _, err := res.Resolve(ctx, source.Request{Repository: source.Repository{URL: ref, InsecureSkipTLSVerify: true, Username: "ci", Password: "tls-s3cret"}}); err != nil || !strings.Contains(warn.String(), "verification is disabled") {
		t.Fatalf("insecure: %v, warning %q", err, warn.String())
	}
}
