package resolve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

const remoteSrc = `
variable "pw" {
  default   = "pw-s3cret"
  sensitive = true
}
repository "charts" {
  url      = "https://charts.example.com/stable"
  username = "ci"
  password = var.pw
  ca_file  = "/etc/ca.pem"
}
repository "ghcr" {
  url = "oci://ghcr.io/acme/charts"
}
release "web" {
  chart   = "charts/web"
  version = "^1.2.0"
}
release "api" {
  chart   = "ghcr/api"
  version = "~2.1"
}
release "worker" {
  chart = "oci://ghcr.io/acme/charts/worker@sha256:1111111111111111111111111111111111111111111111111111111111111111"
}
`

func TestSourceRequest(t *testing.T) {
	st := evalStack(t, remoteSrc)
	byName := map[string]source.Request{}
	for _, r := range st.Releases {
		req, err := SourceRequest(r)
		if err != nil {
			t.Fatal(err)
		}
		byName[r.Addr.Release.Name] = req
	}
	web := byName["web"]
	if web.Chart != "web" || web.Constraint != "^1.2.0" || web.Repository.Password != "pw-s3cret" || web.Repository.Username != "ci" || web.Repository.CAFile != "/etc/ca.pem" || web.Repository.Name != "charts" {
		t.Errorf("web: %+v", web)
	}
	if api := byName["api"]; api.Chart != "api" || api.Repository.URL != "oci://ghcr.io/acme/charts" || SourceOf(api) != "oci://ghcr.io/acme/charts/api" {
		t.Errorf("api: %+v", api)
	}
	if w := byName["worker"]; SourceOf(w) != "oci://ghcr.io/acme/charts/worker" || w.Chart != "" {
		t.Errorf("worker: %+v (source %s)", w, SourceOf(w))
	}
}

func TestLoadLockedErrors(t *testing.T) {
	st := evalStack(t, remoteSrc)
	var web *config.ReleaseInstance
	for _, r := range st.Releases {
		if r.Addr.Release.Name == "web" {
			web = r
		}
	}
	digest := "sha256:" + strings.Repeat("ab", 32)
	lockWith := func(e source.LockedRelease) string {
		dir := t.TempDir()
		l := &source.Lock{Releases: map[string]source.LockedRelease{"web": e}}
		if err := l.Write(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	entry := source.LockedRelease{Chart: "charts/web", Constraint: "^1.2.0", Resolved: source.Resolved{Source: "https://charts.example.com/stable", Name: "web", Version: "1.4.0", Digest: digest}}
	malformed := t.TempDir()
	os.WriteFile(filepath.Join(malformed, source.LockFileName), []byte("release \"web\" {\n  chart = 1\n"), 0o644)
	other := entry
	other.Chart = "charts/other"
	moved := entry
	moved.Source = "https://mirror.example.com"
	narrow := entry
	narrow.Constraint, narrow.Version = "^1.0.0", "1.1.0"
	loose := entry
	loose.Constraint = "^1.0.0" // a changed constraint the locked version still satisfies is fine
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"no lock file", t.TempDir(), "release.web: chart \"charts/web\" (version \"^1.2.0\") is not in convoy.lock.hcl; run `convoy init`"},
		{"malformed", malformed, "convoy.lock.hcl"},
		{"another chart", lockWith(other), `the lock file records chart "charts/other", the stack now says "charts/web"`},
		{"another repository", lockWith(moved), "the lock file records source https://mirror.example.com, the repository is now https://charts.example.com/stable"},
		{"constraint not met", lockWith(narrow), `the locked version 1.1.0 does not satisfy the constraint "^1.2.0"; run ` + "`convoy init`"},
		{"not cached", lockWith(loose), "is locked but not in the chart cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewCharts(t.TempDir()).Load(tc.dir, web)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
			if strings.Contains(err.Error(), "pw-s3cret") {
				t.Fatalf("error leaks the password: %v", err)
			}
		})
	}
}
