package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// Helm's OCI media types (helm.sh/helm/v4/pkg/registry).
const (
	ociConfigMediaType = "application/vnd.cncf.helm.config.v1+json"
	ociChartMediaType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	ociLegacyMediaType = "application/tar+gzip"
)

// ociRef splits oci://host/path/chart[@sha256:…] into the repository
// reference (host/path/chart) and the digest, if any.
func ociRef(req Request) (repoRef, digest string, err error) {
	ref := strings.TrimPrefix(req.Repository.URL, "oci://")
	if req.Chart != "" {
		ref = strings.TrimSuffix(ref, "/") + "/" + req.Chart
	}
	ref, digest, _ = strings.Cut(ref, "@")
	if strings.Contains(ref[strings.LastIndex(ref, "/")+1:], ":") {
		return "", "", fmt.Errorf("oci://%s: give the version with version (a constraint), not as a tag", ref)
	}
	if digest != "" {
		if _, err := parseDigest(digest); err != nil {
			return "", "", err
		}
	}
	return ref, digest, nil
}

// isLoopback reports whether a registry host is this machine: such
// registries are spoken to over plain HTTP (as `helm push --plain-http`
// and Docker's localhost default) unless the repository sets TLS options.
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (res *Resolver) ociRepository(req Request, repoRef string) (*remote.Repository, error) {
	repo, err := remote.NewRepository(repoRef)
	if err != nil {
		return nil, fmt.Errorf("oci://%s: %w", repoRef, err)
	}
	host := repo.Reference.Registry
	r0 := req.Repository
	tlsAsked := r0.CAFile != "" || r0.CertFile != "" || r0.InsecureSkipTLSVerify
	repo.PlainHTTP = isLoopback(host) && !tlsAsked
	client, err := res.httpClient(req.Repository)
	if err != nil {
		return nil, err
	}
	ac := &auth.Client{Client: client, Cache: auth.NewCache(), Header: map[string][]string{"User-Agent": {"convoy"}}}
	r := req.Repository
	switch {
	case r.BearerToken != "":
		ac.Credential = auth.StaticCredential(host, auth.Credential{AccessToken: r.BearerToken})
	case r.Username != "" || r.Password != "":
		ac.Credential = auth.StaticCredential(host, auth.Credential{Username: r.Username, Password: r.Password})
	default:
		ac.Credential = res.registryCredentials()
	}
	repo.Client = ac
	return repo, nil
}

// registryCredentials reads the configured credential files in order
// (Helm's registry config, Docker's config and its helpers); a file that
// does not exist is skipped.
func (res *Resolver) registryCredentials() auth.CredentialFunc {
	var stores []credentials.Store
	for _, path := range res.RegistryConfigs {
		s, err := credentials.NewStore(path, credentials.StoreOptions{})
		if err == nil {
			stores = append(stores, s)
		}
	}
	if len(stores) == 0 {
		return nil
	}
	return credentials.Credential(credentials.NewStoreWithFallbacks(stores[0], stores[1:]...))
}

func (res *Resolver) resolveOCI(ctx context.Context, req Request) (Resolved, error) {
	repoRef, digest, err := ociRef(req)
	if err != nil {
		return Resolved{}, fmt.Errorf("%s: %w", req.describe(), err)
	}
	repo, err := res.ociRepository(req, repoRef)
	if err != nil {
		return Resolved{}, err
	}
	name := repoRef[strings.LastIndex(repoRef, "/")+1:]
	reference := digest
	version := ""
	if digest == "" {
		var versions []string
		err := repo.Tags(ctx, "", func(tags []string) error {
			for _, t := range tags {
				// Helm stores "+" of a version as "_" in the tag.
				versions = append(versions, strings.ReplaceAll(t, "_", "+"))
			}
			return nil
		})
		if err != nil {
			return Resolved{}, fmt.Errorf("%s: list tags: %w%s", req.describe(), err, ociHint(err))
		}
		version, err = pickVersion(req.Constraint, versions)
		if err != nil {
			return Resolved{}, fmt.Errorf("%s: %w", req.describe(), err)
		}
		reference = strings.ReplaceAll(version, "+", "_")
	}
	mdesc, layer, err := res.chartManifest(ctx, repo, reference, "")
	if err != nil {
		return Resolved{}, fmt.Errorf("%s: %w%s", req.describe(), err, ociHint(err))
	}
	r := Resolved{Source: "oci://" + repoRef, Name: name, Version: version, Digest: layer.Digest.String(), Manifest: mdesc.Digest.String()}
	if digest != "" {
		// The version is known from the config blob; read it from the
		// chart itself below, once cached.
		r.Version = ""
	}
	if !res.Cache.Has(r.Digest) {
		blob, err := repo.Blobs().Fetch(ctx, *layer)
		if err != nil {
			return Resolved{}, fmt.Errorf("%s: fetch chart layer %s: %w", req.describe(), layer.Digest, err)
		}
		_, err = res.Cache.Put(blob, r.Digest, res.maxArchive(), checkArchive(name, version))
		blob.Close()
		if err != nil {
			return Resolved{}, fmt.Errorf("%s: chart layer %s: %w", req.describe(), layer.Digest, err)
		}
	}
	if r.Version == "" {
		ch, err := res.Cache.load(r.Digest)
		if err != nil {
			return Resolved{}, fmt.Errorf("%s: %w", req.describe(), err)
		}
		r.Version = ch.Metadata.Version
		if !ConstraintAdmits(req.Constraint, r.Version) {
			return Resolved{}, fmt.Errorf("%s: the chart at %s is version %s, which the constraint does not admit", req.describe(), digest, r.Version)
		}
	}
	res.proven(req.Repository, r.Digest)
	return r, nil
}

// chartManifest fetches the manifest of a Helm chart (reference: a tag or
// a digest) and returns its descriptor and chart layer. A manifest asked
// for by digest (want) must hash to it.
func (res *Resolver) chartManifest(ctx context.Context, repo *remote.Repository, reference, want string) (ocispec.Descriptor, *ocispec.Descriptor, error) {
	mdesc, rc, err := repo.FetchReference(ctx, reference)
	if err != nil {
		return mdesc, nil, fmt.Errorf("fetch manifest %s: %w", reference, err)
	}
	data, err := io.ReadAll(io.LimitReader(rc, 4<<20+1))
	rc.Close()
	if err != nil {
		return mdesc, nil, fmt.Errorf("fetch manifest %s: %w", reference, err)
	}
	if len(data) > 4<<20 {
		return mdesc, nil, fmt.Errorf("manifest %s is larger than 4 MiB", reference)
	}
	if want != "" {
		if got := digest.FromBytes(data).String(); got != want {
			return mdesc, nil, fmt.Errorf("manifest %s: the registry served content of digest %s", reference, got)
		}
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return mdesc, nil, fmt.Errorf("manifest %s: %w", reference, err)
	}
	if m.Config.MediaType != ociConfigMediaType {
		return mdesc, nil, fmt.Errorf("%s is not a Helm chart (config media type %q, want %q)", reference, m.Config.MediaType, ociConfigMediaType)
	}
	for i := range m.Layers {
		if mt := m.Layers[i].MediaType; mt == ociChartMediaType || mt == ociLegacyMediaType {
			return mdesc, &m.Layers[i], nil
		}
	}
	return mdesc, nil, fmt.Errorf("manifest %s has no chart layer (%s)", reference, ociChartMediaType)
}

// ociHint explains authentication failures.
func ociHint(err error) string {
	var re *errcode.ErrorResponse
	if errors.Is(err, auth.ErrBasicCredentialNotFound) ||
		errors.As(err, &re) && (re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusForbidden) {
		return " (the registry wants credentials: give username and password in a repository block, or log in with `helm registry login` or `docker login`)"
	}
	return ""
}

// OCIRepository is a client of one OCI repository (host/path, no tag or
// digest) as convoy speaks to registries: plain HTTP to loopback hosts,
// credentials from the repository given (or the resolver's credential
// files), the resolver's timeouts. `convoy push` and the stack sources of
// the controller use it.
func (res *Resolver) OCIRepository(repo Repository, repoRef string) (*remote.Repository, error) {
	return res.ociRepository(Request{Repository: repo}, repoRef)
}
