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

// A registry whose repository lists 10,000 tags, in pages linked as the
// distribution spec says, nearly all of them nightlies and dates: the
// catalog reads every page and only release versions count as newest.
func TestCatalogOfTenThousandTags(t *testing.T) {
	var tags []string
	for i := 0; len(tags) < 9_995; i++ {
		tags = append(tags, fmt.Sprintf("nightly-%d", 20200101+i), strconv.Itoa(20200101+i))
	}
	tags = append(tags, "latest", "main", "1.0.0", "1.4.2", "2.0.0-rc.1")
	tags = tags[len(tags)-10_000:]
	const page = 3000
	pages := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/charts/big/tags/list" {
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
			w.Header().Set("Link", fmt.Sprintf(`</v2/charts/big/tags/list?last=%s&n=%d>; rel="next"`, tags[end-1], page))
		}
		json.NewEncoder(w).Encode(map[string]any{"name": "charts/big", "tags": tags[start:end]})
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	res := &source.Resolver{Cache: source.Cache{Dir: t.TempDir()}}
	req := source.Request{Repository: source.Repository{URL: "oci://" + host + "/charts/big"}, Constraint: "^1.0.0"}
	cat, err := res.Catalog(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	vs, skipped, err := cat.Versions("")
	if err != nil || len(skipped) != 0 {
		t.Fatal(err, skipped)
	}
	if len(vs) != 10_000 || pages != 4 {
		t.Fatalf("%d versions in %d pages, want 10000 in 4", len(vs), pages)
	}
	n, err := source.NewestVersions(req.Constraint, "1.0.0", vs)
	if err != nil {
		t.Fatal(err)
	}
	if want := (source.Newest{Wanted: "1.4.2", Patch: "1.0.0", Minor: "1.4.2", Major: "1.4.2"}); n != want {
		t.Errorf("got %+v, want %+v", n, want)
	}
}
