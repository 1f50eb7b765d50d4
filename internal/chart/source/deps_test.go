package source_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
)

// A chart straight from a repository whose charts/ lacks its dependencies
// (helm package refuses to make one, so the archive is written here; the
// index is helm's) gets them from an HTTP repository and a registry.
func TestDependenciesFetchedWhenChartsDirLacksThem(t *testing.T) {
	repo := sourcetest.NewHTTPRepo(t, false)
	reg := sourcetest.StartRegistry(t, "", "")
	reg.Push(t, sourcetest.Package(t, t.TempDir(), "api", "1.1.0"), "charts")
	reg.Push(t, sourcetest.Package(t, t.TempDir(), "api", "2.0.0"), "charts")
	sourcetest.Package(t, repo.Dir, "lib", "1.0.0")
	sourcetest.Package(t, repo.Dir, "lib", "1.3.0")
	app := tarGz(t, map[string]string{
		"app/Chart.yaml": fmt.Sprintf(`apiVersion: v2
name: app
version: 0.1.0
dependencies:
- name: lib
  version: ^1.0.0
  repository: %s
- name: api
  version: ~1
  repository: oci://%s/charts
`, repo.URL(), reg.Host),
		"app/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
	})
	if err := os.WriteFile(filepath.Join(repo.Dir, "app-0.1.0.tgz"), app, 0o644); err != nil {
		t.Fatal(err)
	}
	repo.Index(t)

	res := newResolver(t)
	got, err := res.Resolve(context.Background(), source.Request{Repository: source.Repository{URL: repo.URL()}, Chart: "app"})
	if err != nil {
		t.Fatal(err)
	}
	var deps []string
	for _, d := range got.Dependencies {
		deps = append(deps, d.Name+" "+d.Version+" "+d.Source)
	}
	want := []string{"lib 1.3.0 " + repo.URL(), "api 1.1.0 oci://" + reg.Host + "/charts/api"}
	if !slices.Equal(deps, want) {
		t.Fatalf("dependencies %q, want %q", deps, want)
	}
	ch, err := res.Cache.LoadLocked(got)
	if err != nil {
		t.Fatal(err)
	}
	var subs []string
	for _, s := range ch.Dependencies() {
		subs = append(subs, s.Name()+" "+s.Metadata.Version)
	}
	slices.Sort(subs)
	if !slices.Equal(subs, []string{"api 1.1.0", "lib 1.3.0"}) {
		t.Fatalf("loaded subcharts %q", subs)
	}

	// A lock round trip keeps the dependencies.
	dir := t.TempDir()
	lock := &source.Lock{Releases: map[string]source.LockedRelease{"app": {Chart: "charts/app", Resolved: got}}}
	if err := lock.Write(dir); err != nil {
		t.Fatal(err)
	}
	back, diags := source.ReadLock(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if g := back.Releases["app"]; len(g.Dependencies) != 2 || g.Dependencies[1].Manifest == "" || g.Dependencies[0].Digest != got.Dependencies[0].Digest {
		t.Fatalf("lock round trip: %+v", g)
	}
	if _, err := res.Cache.LoadLocked(back.Releases["app"].Resolved); err != nil {
		t.Fatal(err)
	}
}
