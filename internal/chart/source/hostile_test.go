package source_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
)

// hostileIndex serves an index for chart "web" 1.0.0 whose archive is body
// with the given digest (hex, "" for the body's own).
func hostileIndex(url, digest string) string {
	return fmt.Sprintf(`apiVersion: v1
entries:
  web:
  - apiVersion: v2
    name: web
    version: 1.0.0
    digest: %s
    urls:
    - %s/web-1.0.0.tgz
`, digest, url)
}

func tarGz(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(content))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func TestHostileRepositories(t *testing.T) {
	good := func(t *testing.T) []byte {
		data, err := os.ReadFile(sourcetest.Package(t, t.TempDir(), "web", "1.0.0"))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	for _, tc := range []struct {
		name string
		// serve answers /web-1.0.0.tgz; digest is the index digest.
		archive func(t *testing.T) (body []byte, digest string, header map[string]string)
		want    string
	}{
		{"wrong digest", func(t *testing.T) ([]byte, string, map[string]string) {
			return good(t), strings.Repeat("ab", 32), nil
		}, "digest mismatch"},
		{"not gzip", func(t *testing.T) ([]byte, string, map[string]string) {
			b := []byte("this is not a gzip archive")
			return b, sum(b), nil
		}, "not a valid chart archive"},
		{"traversal paths", func(t *testing.T) ([]byte, string, map[string]string) {
			b := tarGz(t, map[string]string{
				"web/Chart.yaml":         "apiVersion: v2\nname: web\nversion: 1.0.0\n",
				"web/../../../evil.yaml": "owned: true\n",
			})
			return b, sum(b), nil
		}, "not a valid chart archive"},
		{"another chart", func(t *testing.T) ([]byte, string, map[string]string) {
			data, _ := os.ReadFile(sourcetest.Package(t, t.TempDir(), "other", "1.0.0"))
			return data, sum(data), nil
		}, `holds chart "other"`},
		{"10 GB Content-Length", func(t *testing.T) ([]byte, string, map[string]string) {
			return []byte("x"), strings.Repeat("ab", 32), map[string]string{"Content-Length": "10737418240"}
		}, "announces 10737418240 bytes, more than the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, digest, header := tc.archive(t)
			repo := sourcetest.NewHTTPRepo(t, false)
			repo.Wrap(func(w http.ResponseWriter, r *http.Request, _ http.Handler) {
				switch r.URL.Path {
				case "/index.yaml":
					fmt.Fprint(w, hostileIndex(repo.URL(), digest))
				case "/web-1.0.0.tgz":
					for k, v := range header {
						w.Header().Set(k, v)
					}
					w.WriteHeader(http.StatusOK)
					w.Write(body)
				default:
					http.NotFound(w, r)
				}
			})
			root := t.TempDir()
			res := &source.Resolver{Cache: source.Cache{Dir: filepath.Join(root, "cache")}}
			_, err := res.Resolve(context.Background(), source.Request{Repository: source.Repository{URL: repo.URL()}, Chart: "web"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error with %q, got %v", tc.want, err)
			}
			t.Logf("error: %v", err)
			if !strings.Contains(err.Error(), `chart "web"`) {
				t.Errorf("error does not name the chart: %v", err)
			}
			// Nothing outside the cache, and no archive in it.
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				rel, _ := filepath.Rel(root, p)
				if err == nil && !d.IsDir() && !strings.HasPrefix(rel, "cache"+string(filepath.Separator)+"index") {
					t.Errorf("file left behind: %s", rel)
				}
				return nil
			})
		})
	}
}

func TestCacheIsContentAddressedAndConcurrentSafe(t *testing.T) {
	archive := sourcetest.Package(t, t.TempDir(), "web", "1.0.0")
	data, _ := os.ReadFile(archive)
	cache := source.Cache{Dir: t.TempDir()}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := cache.Put(bytes.NewReader(data), "", 1<<20, nil)
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	d := fileDigest(t, archive)
	entries, _ := os.ReadDir(filepath.Join(cache.Dir, "sha256"))
	if len(entries) != 1 || entries[0].Name() != strings.TrimPrefix(d, "sha256:")+".tgz" {
		t.Fatalf("cache holds %v, want only %s", entries, d)
	}
	// A damaged entry is an error, not another chart.
	p, _ := cache.Path(d)
	os.WriteFile(p, tarGz(t, map[string]string{"web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 6.6.6\n"}), 0o644)
	if _, err := cache.LoadLocked(source.Resolved{Digest: d}); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged cache entry: %v", err)
	}
	if err := cache.Clean(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cache.Dir); !os.IsNotExist(err) {
		t.Fatalf("cache not cleaned: %v", err)
	}
}
