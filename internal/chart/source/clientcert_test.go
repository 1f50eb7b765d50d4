package source_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
)

// writeClientCert makes a CA and a client certificate it signed, writes
// the client's cert and key as PEM into dir and returns the CA pool.
func writeClientCert(t *testing.T, dir string) (*x509.CertPool, string, string) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "convoy test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "convoy"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool, certFile, keyFile
}

func TestHTTPSRepoClientCertificate(t *testing.T) {
	dir := t.TempDir()
	pool, certFile, keyFile := writeClientCert(t, dir)
	tlsRepo := sourcetest.NewHTTPSRepo(t, func(c *tls.Config) {
		c.ClientAuth = tls.RequireAndVerifyClientCert
		c.ClientCAs = pool
	})
	tlsRepo.Publish(t, "web", "1.0.0")

	ca := filepath.Join(dir, "server-ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsRepo.Server.Certificate().Raw}), 0o600)
	ctx := context.Background()
	if _, err := newResolver(t).Resolve(ctx, source.Request{Repository: source.Repository{URL: tlsRepo.URL(), CAFile: ca, CertFile: certFile, KeyFile: keyFile}, Chart: "web"}); err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	_, err := newResolver(t).Resolve(ctx, source.Request{Repository: source.Repository{URL: tlsRepo.URL(), CAFile: ca}, Chart: "web"})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without a client certificate: %v", err)
	}
	_, err = newResolver(t).Resolve(ctx, source.Request{Repository: source.Repository{Name: "tls", URL: tlsRepo.URL(), CertFile: certFile, KeyFile: filepath.Join(dir, "missing.pem")}, Chart: "web"})
	if err == nil || !strings.Contains(err.Error(), `repository "tls"`) || !strings.Contains(err.Error(), "key_file") {
		t.Fatalf("missing key file: %v", err)
	}
}
