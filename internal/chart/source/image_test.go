package source_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source"
)

func TestParseImage(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want source.ImageRef
	}{
		{"nginx", source.ImageRef{Registry: "docker.io", Repository: "library/nginx", Tag: "latest"}},
		{"nginx:1.27.0", source.ImageRef{Registry: "docker.io", Repository: "library/nginx", Tag: "1.27.0"}},
		{"bitnami/redis:7.2.4", source.ImageRef{Registry: "docker.io", Repository: "bitnami/redis", Tag: "7.2.4"}},
		{"127.0.0.1:5000/team/web:v1.2.0", source.ImageRef{Registry: "127.0.0.1:5000", Repository: "team/web", Tag: "v1.2.0"}},
		{"localhost/web", source.ImageRef{Registry: "localhost", Repository: "web", Tag: "latest"}},
		{"ghcr.io/a/b:1.0.0@sha256:" + strings.Repeat("a", 64), source.ImageRef{Registry: "ghcr.io", Repository: "a/b", Tag: "1.0.0", Digest: "sha256:" + strings.Repeat("a", 64)}},
		{"ghcr.io/a/b@sha256:" + strings.Repeat("a", 64), source.ImageRef{Registry: "ghcr.io", Repository: "a/b", Digest: "sha256:" + strings.Repeat("a", 64)}},
	} {
		got, err := source.ParseImage(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseImage(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", ":1.0", "a b:1", "/x:1", "ghcr.io//x", "ghcr.io/Team/x:1"} {
		if _, err := source.ParseImage(bad); err == nil {
			t.Errorf("ParseImage(%q): no error", bad)
		}
	}
}

func TestNewerImageTag(t *testing.T) {
	tags := []string{"latest", "main", "20240501", "nightly-2024", "1.2.0", "1.2.9", "1.10.0", "1.11.0-rc.1", "2.0.0", "v1.99.0", "1.3"}
	for _, tc := range []struct{ tag, want string }{
		{"1.2.0", "1.10.0"}, // same major, numeric order, no pre-release, no v-series
		{"1.10.0", ""},
		{"1.11.0-rc.0", "1.11.0-rc.1"}, // a pre-release sees pre-releases
		{"2.0.0", ""},
		{"latest", ""},
		{"v1.0.0", "v1.99.0"},
		{"1.3", ""}, // no version
	} {
		if got := source.NewerImageTag(tc.tag, tags); got != tc.want {
			t.Errorf("NewerImageTag(%q) = %q, want %q", tc.tag, got, tc.want)
		}
	}
}

// An image repository of 10,000 tags, listed in pages as registries do:
// every page is read, and among nightlies and dates the one newer version
// of the same major is found.
func TestImageTagsOfTenThousandTags(t *testing.T) {
	var tags []string
	for i := 0; len(tags) < 9_995; i++ {
		tags = append(tags, fmt.Sprintf("nightly-%d", 20200101+i), strconv.Itoa(20200101+i))
	}
	tags = append(tags, "latest", "1.0.0", "1.4.2", "1.5.0-rc.1", "2.0.0")
	tags = tags[len(tags)-10_000:]
	const page = 1000
	pages := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/team/big/tags/list" {
			http.NotFound(w, r)
			return
		}
		pages++
		start := 0
		if last := r.URL.Query().Get("last"); last != "" {
			for i, tg := range tags {
				if tg == last {
					start = i + 1
				}
			}
		}
		end := min(start+page, len(tags))
		if end < len(tags) {
			w.Header().Set("Link", fmt.Sprintf(`</v2/team/big/tags/list?last=%s&n=%d>; rel="next"`, tags[end-1], page))
		}
		json.NewEncoder(w).Encode(map[string]any{"name": "team/big", "tags": tags[start:end]})
	}))
	t.Cleanup(srv.Close)
	img, err := source.ParseImage(strings.TrimPrefix(srv.URL, "http://") + "/team/big:1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	res := &source.Resolver{Cache: source.Cache{Dir: t.TempDir()}}
	got, err := res.ImageTags(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10_000 || pages != 10 {
		t.Fatalf("listed %d tags in %d pages, want 10000 in 10", len(got), pages)
	}
	if n := source.NewerImageTag(img.Tag, got); n != "1.4.2" {
		t.Errorf("newer than 1.0.0: %q, want 1.4.2", n)
	}
}
