package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source"
)

// BenchmarkOutdated runs `convoy outdated` on 100 releases across 10 HTTP
// repositories (each index: 10 charts of 60 versions, pre-releases among
// them, about 150 KiB). cold: an empty chart cache, every index
// downloaded; warm: the indexes revalidated by ETag (304).
func BenchmarkOutdated(b *testing.B) {
	var stack strings.Builder
	lock := &source.Lock{Releases: map[string]source.LockedRelease{}}
	for r := range 10 {
		var idx strings.Builder
		idx.WriteString("apiVersion: v1\nentries:\n")
		for c := range 10 {
			name := fmt.Sprintf("chart%d", c)
			fmt.Fprintf(&idx, "  %s:\n", name)
			for maj := range 3 {
				for min := range 5 {
					for patch := range 4 {
						v := fmt.Sprintf("%d.%d.%d", maj, min, patch)
						if patch == 3 {
							v += "-rc.1"
						}
						fmt.Fprintf(&idx, "  - apiVersion: v2\n    name: %s\n    version: %s\n    appVersion: %q\n    description: A chart of the benchmark, with a description of ordinary length.\n    created: \"2024-05-01T10:00:00Z\"\n    digest: %064x\n    urls:\n    - %s-%s.tgz\n", name, v, v, maj*100+min*10+patch, name, v)
					}
				}
			}
		}
		idx.WriteString("generated: \"2024-05-01T10:00:00Z\"\n")
		data := []byte(idx.String())
		etag := fmt.Sprintf(`"%d"`, len(data))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			w.Header().Set("ETag", etag)
			if req.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Write(data)
		}))
		b.Cleanup(srv.Close)
		fmt.Fprintf(&stack, "repository \"repo%d\" {\n  url = %q\n}\n", r, srv.URL)
		for c := range 10 {
			name := fmt.Sprintf("r%dc%d", r, c)
			fmt.Fprintf(&stack, "release %q {\n  chart   = \"repo%d/chart%d\"\n  version = \"^1.0.0\"\n}\n", name, r, c)
			lock.Releases[name] = source.LockedRelease{Chart: fmt.Sprintf("repo%d/chart%d", r, c), Constraint: "^1.0.0",
				Resolved: source.Resolved{Source: srv.URL, Name: fmt.Sprintf("chart%d", c), Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064x", 100)}}
		}
	}
	dir := filepath.Join(b.TempDir(), "bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := lock.Write(dir); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B) {
		var out, errb bytes.Buffer
		code := execute(context.Background(), []string{"outdated", "-C", dir, "--json"}, streams{In: strings.NewReader(""), Out: &out, Err: &errb})
		if code != 0 || strings.Count(out.String(), `"latest_major": "2.4.2"`) != 100 {
			b.Fatalf("exit %d\n%.2000s\n%s", code, out.String(), errb.String())
		}
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			b.Setenv("CONVOY_CACHE_DIR", filepath.Join(b.TempDir(), "charts"))
			b.StartTimer()
			run(b)
		}
	})
	b.Run("warm", func(b *testing.B) {
		b.Setenv("CONVOY_CACHE_DIR", filepath.Join(b.TempDir(), "charts"))
		run(b)
		for b.Loop() {
			run(b)
		}
	})
}
