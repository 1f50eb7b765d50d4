package source

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/convoy-sh/convoy/internal/safefile"
)

// maxPEMFileSize bounds ca_file, cert_file and key_file: a CA bundle of
// every public root is a few hundred kilobytes.
const maxPEMFileSize = 4 << 20

// loadKeyPair is tls.LoadX509KeyPair reading through safefile: regular
// files only, read up to maxPEMFileSize.
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := safefile.Read(certFile, maxPEMFileSize)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := safefile.Read(keyFile, maxPEMFileSize)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// Repository is where a chart comes from and how to reach it. Password and
// BearerToken are secrets: they go into request headers only, never into
// errors or logs.
type Repository struct {
	// Name is the repository block's name ("" for a bare oci:// chart).
	Name string
	// URL is https://…, http://… or oci://host/path.
	URL         string
	Username    string
	Password    string
	BearerToken string
	// CAFile, CertFile and KeyFile are PEM files: a CA bundle to trust in
	// addition to the system roots, and a client certificate and key.
	CAFile, CertFile, KeyFile string
	InsecureSkipTLSVerify     bool
}

// label names a repository in messages.
func (r Repository) label() string {
	if r.Name == "" {
		return redactURL(r.URL)
	}
	return fmt.Sprintf("repository %q (%s)", r.Name, redactURL(r.URL))
}

// httpClient builds the client of one repository: its TLS settings and the
// resolver's timeouts. Credentials are added per request (sameHost).
func (res *Resolver) httpClient(repo Repository) (*http.Client, error) {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if repo.CAFile != "" {
		pem, err := safefile.Read(repo.CAFile, maxPEMFileSize)
		if err != nil {
			return nil, fmt.Errorf("%s: ca_file: %w", repo.label(), err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: ca_file %s holds no PEM certificate", repo.label(), repo.CAFile)
		}
		tlsConf.RootCAs = pool
	}
	if repo.CertFile != "" || repo.KeyFile != "" {
		cert, err := loadKeyPair(repo.CertFile, repo.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%s: client certificate (cert_file %s, key_file %s): %w", repo.label(), repo.CertFile, repo.KeyFile, err)
		}
		tlsConf.Certificates = []tls.Certificate{cert}
	}
	if repo.InsecureSkipTLSVerify {
		tlsConf.InsecureSkipVerify = true
		res.warnf("Warning: %s: TLS certificate verification is disabled (insecure_skip_tls_verify); the chart could come from anyone on the path", repo.label())
	}
	timeout := res.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: min(timeout, time.Minute),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          10,
		IdleConnTimeout:       90 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: timeout}, nil
}
