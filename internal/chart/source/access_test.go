package source_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
)

// tenantResolver is a resolver of the shared cache dir for tenant, with
// the registry credential files given.
func tenantResolver(cache string, proofs *source.Proofs, tenant string, configs ...string) *source.Resolver {
	return &source.Resolver{
		Cache:           source.Cache{Dir: cache},
		RegistryConfigs: configs,
		Access:          &source.Access{Tenant: tenant, Credentials: strings.Join(configs, ","), Who: "Stack " + tenant + "/shop", Proofs: proofs},
	}
}

func registryConfig(t *testing.T, host, user, password string) string {
	t.Helper()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, auth)), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A chart one tenant pulled into the shared cache is served to another
// only once the registry serves its manifest to that tenant's own
// credentials: without them, or with wrong ones, Authorize refuses naming
// the chart and who asked; with them, one manifest request and no
// download. Proofs are remembered per tenant and credentials for their
// lifetime, and a lock pairing a manifest with another chart's layer is
// refused.
func TestAuthorizeOCIChart(t *testing.T) {
	const user, password = "team-a", "s3cret-registry"
	reg := sourcetest.StartRegistry(t, user, password)
	reg.Push(t, sourcetest.Package(t, t.TempDir(), "api", "1.0.0"), "charts")
	otherManifest := reg.Push(t, sourcetest.Package(t, t.TempDir(), "api", "1.1.0"), "charts")
	ref := "oci://" + reg.Host + "/charts/api"
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "cache")
	now := time.Now()
	proofs := &source.Proofs{Now: func() time.Time { return now }}
	good := registryConfig(t, reg.Host, user, password)

	a := tenantResolver(cache, proofs, "team-a", good)
	locked, err := a.Resolve(ctx, source.Request{Repository: source.Repository{URL: ref}, Constraint: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	layer := "/blobs/" + locked.Digest
	if n := reg.Count(http.MethodGet, layer); n != 1 {
		t.Fatalf("layer downloads: %d", n)
	}
	// The pull was the proof: nothing is asked again.
	before := reg.Requests()
	if err := a.Authorize(ctx, source.Repository{URL: ref}, locked); err != nil {
		t.Fatal(err)
	}
	if n := reg.Requests() - before; n != 0 {
		t.Fatalf("team-a's proven pull asked the registry %d times", n)
	}

	for _, tc := range []struct {
		name, why string
		res       *source.Resolver
	}{
		{"no credentials", "basic credential not found", tenantResolver(cache, proofs, "team-b")},
		{"wrong credentials", "401", tenantResolver(cache, proofs, "team-b", registryConfig(t, reg.Host, user, "not-it"))},
	} {
		res := tc.res
		t.Run(tc.name, func(t *testing.T) {
			err := res.Authorize(ctx, source.Repository{URL: ref}, locked)
			var ae *source.AccessError
			if !errors.As(err, &ae) {
				t.Fatalf("served the cached chart: %v", err)
			}
			for _, want := range []string{"Stack team-b/shop may not pull chart " + ref + " 1.0.0 (" + locked.Digest + ")", tc.why} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q: %v", want, err)
				}
			}
			if strings.Contains(err.Error(), "not-it") {
				t.Errorf("error shows the password: %v", err)
			}
			// Refused again: a refusal is never remembered as a proof.
			if err := res.Authorize(ctx, source.Repository{URL: ref}, locked); err == nil {
				t.Fatal("served on the second ask")
			}
		})
	}

	b := tenantResolver(cache, proofs, "team-b", registryConfig(t, reg.Host, user, password))
	manifests := reg.Count(http.MethodGet, "/manifests/"+locked.Manifest)
	if err := b.Authorize(ctx, source.Repository{URL: ref}, locked); err != nil {
		t.Fatal(err)
	}
	if n := reg.Count(http.MethodGet, "/manifests/"+locked.Manifest) - manifests; n != 1 {
		t.Fatalf("team-b's check fetched the manifest %d times, want 1", n)
	}
	if n := reg.Count(http.MethodGet, layer); n != 1 {
		t.Fatalf("team-b's check downloaded the layer (%d downloads in all)", n)
	}
	before = reg.Requests()
	if err := b.Authorize(ctx, source.Repository{URL: ref}, locked); err != nil {
		t.Fatal(err)
	}
	if n := reg.Requests() - before; n != 0 {
		t.Fatalf("team-b's proof was not remembered: %d requests", n)
	}

	t.Run("a manifest of another version", func(t *testing.T) {
		forged := locked
		forged.Manifest = otherManifest
		err := tenantResolver(cache, proofs, "team-c", good).Authorize(ctx, source.Repository{URL: ref}, forged)
		if err == nil || !strings.Contains(err.Error(), "names the chart layer") {
			t.Fatalf("got %v", err)
		}
	})

	// A proof lasts its lifetime; then the registry is asked again.
	now = now.Add(source.DefaultProofTTL + time.Second)
	manifests = reg.Count(http.MethodGet, "/manifests/"+locked.Manifest)
	if err := a.Authorize(ctx, source.Repository{URL: ref}, locked); err != nil {
		t.Fatal(err)
	}
	if n := reg.Count(http.MethodGet, "/manifests/"+locked.Manifest) - manifests; n != 1 {
		t.Fatalf("an expired proof: %d manifest requests, want 1", n)
	}

	// Without Access (the CLI), nothing is checked.
	plain := &source.Resolver{Cache: source.Cache{Dir: cache}}
	if err := plain.Authorize(ctx, source.Repository{URL: ref}, locked); err != nil {
		t.Fatal(err)
	}
}

// The same for a chart repository with basic auth: the check is the
// index (revalidated) and a HEAD of the archive with the tenant's
// credentials, never a download; a server that does not answer HEAD is
// asked for the archive, which must hash to the locked digest.
func TestAuthorizeHTTPChart(t *testing.T) {
	const user, password = "team-a", "s3cret-repo"
	repo := sourcetest.NewHTTPRepo(t, false)
	repo.Publish(t, "web", "1.0.0")
	var noHead, down, rotated atomic.Bool
	repo.Wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password || rotated.Load() {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodHead && noHead.Load() {
			http.Error(w, "no HEAD here", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "cache")
	now := time.Now()
	proofs := &source.Proofs{Now: func() time.Time { return now }}
	withCreds := source.Repository{Name: "private", URL: repo.URL(), Username: user, Password: password}
	a := tenantResolver(cache, proofs, "team-a")
	locked, err := a.Resolve(ctx, source.Request{Repository: withCreds, Chart: "web", Constraint: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	downloads := func() int {
		n := 0
		for _, q := range repo.Requests() {
			if q == "GET /web-1.0.0.tgz" {
				n++
			}
		}
		return n
	}
	before := len(repo.Requests())
	if err := a.Authorize(ctx, withCreds, locked); err != nil {
		t.Fatal(err)
	}
	if n := len(repo.Requests()) - before; n != 0 || downloads() != 1 {
		t.Fatalf("team-a's proven pull: %d more requests, %d downloads", n, downloads())
	}

	for name, r := range map[string]source.Repository{
		"no credentials":    {Name: "private", URL: repo.URL()},
		"wrong credentials": {Name: "private", URL: repo.URL(), Username: user, Password: "not-it"},
	} {
		t.Run(name, func(t *testing.T) {
			err := tenantResolver(cache, proofs, "team-b").Authorize(ctx, r, locked)
			var ae *source.AccessError
			if !errors.As(err, &ae) {
				t.Fatalf("served the cached chart: %v", err)
			}
			for _, want := range []string{"Stack team-b/shop may not pull chart web from " + repo.URL() + " 1.0.0 (" + locked.Digest + ")", "401 Unauthorized"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q: %v", want, err)
				}
			}
			if strings.Contains(err.Error(), "not-it") {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}

	b := tenantResolver(cache, proofs, "team-b")
	before = len(repo.Requests())
	if err := b.Authorize(ctx, withCreds, locked); err != nil {
		t.Fatal(err)
	}
	if got := repo.Requests()[before:]; downloads() != 1 || len(got) != 2 || got[0] != "GET /index.yaml" || got[1] != "HEAD /web-1.0.0.tgz" {
		t.Fatalf("team-b's check: %v (downloads %d)", got, downloads())
	}

	noHead.Store(true)
	if err := tenantResolver(cache, proofs, "team-c").Authorize(ctx, withCreds, locked); err != nil {
		t.Fatal(err)
	}
	if downloads() != 2 {
		t.Fatalf("without HEAD: %d downloads, want the archive once more", downloads())
	}
	forged := locked
	forged.Digest = "sha256:" + strings.Repeat("0", 64)
	err = tenantResolver(cache, proofs, "team-d").Authorize(ctx, withCreds, forged)
	if err == nil || !strings.Contains(err.Error(), "the index gives version 1.0.0 the digest "+locked.Digest) {
		t.Fatalf("a forged digest: %v", err)
	}

	// Past its lifetime, a proof is asked again; a repository that gives
	// no answer (5xx, down) revokes nothing, but serves no one it never
	// served, and a refusal revokes.
	now = now.Add(source.DefaultProofTTL + time.Second)
	down.Store(true)
	if err := b.Authorize(ctx, withCreds, locked); err != nil {
		t.Fatalf("an outage revoked team-b's proof: %v", err)
	}
	if err := tenantResolver(cache, proofs, "team-e").Authorize(ctx, withCreds, locked); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("a tenant never served was served during the outage: %v", err)
	}
	down.Store(false)
	rotated.Store(true) // the repository now refuses the password
	if err := b.Authorize(ctx, withCreds, locked); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("revoked credentials were served: %v", err)
	}
}
