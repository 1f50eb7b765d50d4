package source_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
)

func newResolver(t *testing.T) *source.Resolver {
	return &source.Resolver{Cache: source.Cache{Dir: filepath.Join(t.TempDir(), "cache")}}
}

func fileDigest(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestHTTPRepoPicksHighestMatchingVersion(t *testing.T) {
	repo := sourcetest.NewHTTPRepo(t, false)
	repo.Publish(t, "web", "1.2.0", "1.4.0", "2.0.0", "1.5.0-rc.1")
	res := newResolver(t)
	ctx := context.Background()
	req := source.Request{Repository: source.Repository{Name: "charts", URL: repo.URL()}, Chart: "web"}

	for _, tc := range []struct{ constraint, want string }{
		{"^1.2.0", "1.4.0"},
		{"", "2.0.0"},
		{"~1.2", "1.2.0"},
		{"^1.5.0-0", "1.5.0-rc.1"}, // pre-releases only when the constraint names one
		{"1.2.0", "1.2.0"},
	} {
		t.Run(tc.constraint, func(t *testing.T) {
			req.Constraint = tc.constraint
			got, err := res.Resolve(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != tc.want || got.Name != "web" || got.Source != repo.URL() {
				t.Fatalf("got %+v, want version %s", got, tc.want)
			}
			if want := fileDigest(t, filepath.Join(repo.Dir, "web-"+tc.want+".tgz")); got.Digest != want {
				t.Fatalf("digest %s, the archive is %s", got.Digest, want)
			}
			ch, err := res.Cache.LoadLocked(got)
			if err != nil || ch.Metadata.Version != tc.want {
				t.Fatalf("cached chart: %v %v", ch, err)
			}
		})
	}

	// Every archive was downloaded once; the index was revalidated, not
	// re-downloaded: a second resolve of a cached version fetches nothing
	// but a 304 index.
	before := repo.Count(".tgz")
	req.Constraint = "^1.2.0"
	if _, err := res.Resolve(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := repo.Count(".tgz"); n != before || before != 4 {
		t.Fatalf("archive downloads: %d before, %d after (want 4 and no more)", before, n)
	}
}

func TestHTTPRepoIndexRevalidatedWithETag(t *testing.T) {
	repo := sourcetest.NewHTTPRepo(t, false)
	repo.Publish(t, "web", "1.0.0")
	var notModified int
	repo.Wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path == "/index.yaml" {
			if r.Header.Get("If-Modified-Since") != "" || r.Header.Get("If-None-Match") != "" {
				notModified++
			}
		}
		next.ServeHTTP(w, r) // http.FileServer answers 304 itself
	})
	res := newResolver(t)
	req := source.Request{Repository: source.Repository{URL: repo.URL()}, Chart: "web"}
	for range 2 {
		if _, err := res.Resolve(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if notModified != 1 {
		t.Fatalf("conditional index requests: %d, want 1 (requests %v)", notModified, repo.Requests())
	}
}

func TestHTTPRepoErrorsNameWhatWasAsked(t *testing.T) {
	repo := sourcetest.NewHTTPRepo(t, false)
	repo.Publish(t, "web", "1.2.0", "1.4.0", "2.0.0")
	res := newResolver(t)
	_, err := res.Resolve(context.Background(), source.Request{
		Repository: source.Repository{Name: "charts", URL: repo.URL()}, Chart: "web", Constraint: "^3.0.0",
	})
	if err == nil {
		t.Fatal("resolved ^3.0.0")
	}
	for _, want := range []string{`chart "web"`, `repository "charts"`, repo.URL(), `"^3.0.0"`, "available: 2.0.0, 1.4.0, 1.2.0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	_, err = res.Resolve(context.Background(), source.Request{Repository: source.Repository{URL: repo.URL()}, Chart: "nope"})
	if err == nil || !strings.Contains(err.Error(), `has no chart "nope"`) {
		t.Fatalf("missing chart: %v", err)
	}
}

func TestHTTPRepoAuth(t *testing.T) {
	const user, password, token = "ci", "s3cret-pass", "s3cret-token"
	repo := sourcetest.NewHTTPRepo(t, false)
	repo.Publish(t, "web", "1.0.0")
	repo.Wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		u, p, ok := r.BasicAuth()
		if (ok && u == user && p == password) || r.Header.Get("Authorization") == "Bearer "+token {
			next.ServeHTTP(w, r)
			return
		}
		http.Error(w, "no", http.StatusUnauthorized)
	})
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		repo   source.Repository
		wantOK bool
	}{
		{"basic", source.Repository{Username: user, Password: password}, true},
		{"bearer", source.Repository{BearerToken: token}, true},
		{"wrong password", source.Repository{Username: user, Password: "wrong-s3cret"}, false},
		{"wrong token", source.Repository{BearerToken: "wrong-s3cret"}, false},
		{"none", source.Repository{}, false},
		{"in the URL", source.Repository{URL: strings.Replace(repo.URL(), "http://", "http://"+user+":"+password+"@", 1)}, true},
		{"wrong in the URL", source.Repository{URL: strings.Replace(repo.URL(), "http://", "http://"+user+":wrong-s3cret@", 1)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.repo.URL == "" {
				tc.repo.URL = repo.URL()
			}
			got, err := newResolver(t).Resolve(ctx, source.Request{Repository: tc.repo, Chart: "web"})
			if tc.wantOK {
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(got.Source, "s3cret") {
					t.Fatalf("source %s keeps the password", got.Source)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "credentials") {
				t.Fatalf("want a 401 naming credentials, got %v", err)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("error leaks a secret: %v", err)
			}
		})
	}
}

func TestHTTPSRepoCAAndInsecure(t *testing.T) {
	repo := sourcetest.NewHTTPRepo(t, true)
	repo.Publish(t, "web", "1.0.0")
	ctx := context.Background()

	_, err := newResolver(t).Resolve(ctx, source.Request{Repository: source.Repository{URL: repo.URL()}, Chart: "web"})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("an unknown CA must fail verification, got %v", err)
	}

	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: repo.Server.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := newResolver(t).Resolve(ctx, source.Request{Repository: source.Repository{URL: repo.URL(), CAFile: ca}, Chart: "web"}); err != nil {
		t.Fatalf("with ca_file: %v", err)
	}

	var warn strings.Builder
	res := newResolver(t)
	res.Warn = &warn
	if _, err := res.Resolve(ctx, source.Request{Repository: source.Repository{URL: repo.URL(), InsecureSkipTLSVerify: true}, Chart: "web"}); err != nil {
		t.Fatalf("insecure: %v", err)
	}
	if !strings.Contains(warn.String(), "TLS certificate verification is disabled") {
		t.Fatalf("no warning for insecure_skip_tls_verify: %q", warn.String())
	}
}

func TestHTTPRepoTimeout(t *testing.T) {
	repo := sourcetest.NewHTTPRepo(t, false)
	repo.Publish(t, "web", "1.0.0")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	repo.Wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		select { // hang until the test ends
		case <-release:
		case <-r.Context().Done():
		}
	})
	res := newResolver(t)
	res.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := res.Resolve(context.Background(), source.Request{Repository: source.Repository{URL: repo.URL()}, Chart: "web"})
	if err == nil || !strings.Contains(err.Error(), "timeout") && !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("want a timeout, got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s", d)
	}
}

// Resolvers sharing one cache directory (as concurrent convoy processes
// do) all succeed and leave one archive per digest and no temporary files.
func TestConcurrentResolversShareTheCache(t *testing.T) {
	repo := sourcetest.NewHTTPRepo(t, false)
	repo.Publish(t, "web", "1.0.0", "1.1.0")
	cacheDir := filepath.Join(t.TempDir(), "cache")
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			res := &source.Resolver{Cache: source.Cache{Dir: cacheDir}}
			_, err := res.Resolve(context.Background(), source.Request{Repository: source.Repository{URL: repo.URL()}, Chart: "web", Constraint: []string{"1.0.0", "1.1.0"}[i%2]})
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	filepath.Walk(cacheDir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(cacheDir, p)
			files = append(files, rel)
		}
		return nil
	})
	var archives, other int
	for _, f := range files {
		switch {
		case strings.HasPrefix(f, "sha256/") && strings.HasSuffix(f, ".tgz") && !strings.HasPrefix(filepath.Base(f), "."):
			archives++
		case strings.HasPrefix(f, "index/") && (strings.HasSuffix(f, "/index.yaml") || strings.HasSuffix(f, "/meta.json")):
		default:
			other++
		}
	}
	if archives != 2 || other != 0 {
		t.Fatalf("cache holds %q", files)
	}
}
