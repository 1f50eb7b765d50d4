package run_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/run"
)

// A frozen init with source.Access (the controller's) proves every chart
// the stack will load from a shared cache, the fetched dependencies of a
// local chart included: a tenant whose registry credentials may not pull
// a private dependency that another tenant's init put in the cache is
// refused naming the release, the tenant and the dependency's chart; with
// credentials the registry accepts, the cache serves it without a
// download.
func TestFrozenInitProvesLocalChartDependencies(t *testing.T) {
	const user, pass = "team-a", "s3cret-dep"
	reg := sourcetest.StartRegistry(t, user, pass)
	reg.Push(t, sourcetest.Package(t, t.TempDir(), "api", "0.9.0"), "charts")
	dir := filepath.Join(t.TempDir(), "stack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte("stack \"local\" {\n  default_namespace = \"apps\"\n}\nrelease \"app\" {\n  chart = \"./app\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sourcetest.WriteChart(t, dir, "app", "1.0.0", fmt.Sprintf("dependencies:\n- name: api\n  version: 0.9.0\n  repository: oci://%s/charts\n", reg.Host))
	cfg := func(password string) string {
		p := filepath.Join(t.TempDir(), "config.json")
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
		if err := os.WriteFile(p, []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.Host, auth)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cache := filepath.Join(t.TempDir(), "charts")
	proofs := &source.Proofs{}
	resolver := func(tenant string, configs ...string) *source.Resolver {
		return &source.Resolver{Cache: source.Cache{Dir: cache}, RegistryConfigs: configs,
			Access: &source.Access{Tenant: tenant, Credentials: strings.Join(configs, ","), Who: "Stack " + tenant + "/local", Proofs: proofs}}
	}
	ctx := context.Background()
	opts := run.Options{Source: run.Source{Dir: dir}, ChartCache: cache}
	if _, err := runInit(ctx, opts, run.InitRequest{Resolver: resolver("team-a", cfg(pass))}); err != nil {
		t.Fatal(err)
	}
	lock, diags := source.ReadLock(dir)
	if diags.HasErrors() || len(lock.Releases["app"].Dependencies) != 1 {
		t.Fatalf("lock %+v %v", lock, diags)
	}
	layer := lock.Releases["app"].Dependencies[0].Digest
	if n := reg.Count(http.MethodGet, "/blobs/"+layer); n != 1 {
		t.Fatalf("layer downloads: %d", n)
	}

	for name, res := range map[string]*source.Resolver{
		"no credentials":    resolver("team-b"),
		"wrong credentials": resolver("team-b", cfg("not-it")),
	} {
		_, err := runInit(ctx, opts, run.InitRequest{Frozen: true, Resolver: res})
		var ae *source.AccessError
		if !errors.As(err, &ae) {
			t.Fatalf("%s: the cached dependency was served: %v", name, err)
		}
		want := "release.app: Stack team-b/local may not pull chart oci://" + reg.Host + "/charts/api 0.9.0 (" + layer + ")"
		if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "not-it") {
			t.Errorf("%s: error %v, want %q and no password", name, err, want)
		}
	}
	if _, err := runInit(ctx, opts, run.InitRequest{Frozen: true, Resolver: resolver("team-b", cfg(pass))}); err != nil {
		t.Fatal(err)
	}
	if n := reg.Count(http.MethodGet, "/blobs/"+layer); n != 1 {
		t.Fatalf("team-b's init downloaded the dependency again (%d downloads)", n)
	}
}
