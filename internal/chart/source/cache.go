package source

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
)

// Cache is a content-addressed store of chart archives:
// <Dir>/sha256/<hex>.tgz, written through a temporary file in the same
// directory and renamed into place, so concurrent processes never see a
// partial archive and two writers of one digest both succeed.
type Cache struct {
	Dir string
}

// DefaultCacheDir is where charts are cached: $CONVOY_CACHE_DIR, else
// <os.UserCacheDir>/convoy/charts. getenv is injected (os.Getenv).
func DefaultCacheDir(getenv func(string) string) (string, error) {
	if d := getenv("CONVOY_CACHE_DIR"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("chart cache: %w", err)
	}
	return filepath.Join(base, "convoy", "charts"), nil
}

// ErrNotCached is returned by Open for a digest the cache does not hold.
var ErrNotCached = errors.New("chart not in the cache")

// parseDigest returns the hex of a "sha256:<64 hex>" digest.
func parseDigest(d string) (string, error) {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(h) != 64 {
		return "", fmt.Errorf("digest %q is not sha256:<64 hex digits>", d)
	}
	if _, err := hex.DecodeString(h); err != nil {
		return "", fmt.Errorf("digest %q is not sha256:<64 hex digits>", d)
	}
	return strings.ToLower(h), nil
}

// Path is where the archive of digest lives (whether or not it is cached).
func (c Cache) Path(digest string) (string, error) {
	h, err := parseDigest(digest)
	if err != nil {
		return "", err
	}
	return filepath.Join(c.Dir, "sha256", h+".tgz"), nil
}

// Has reports whether the archive of digest is cached.
func (c Cache) Has(digest string) bool {
	p, err := c.Path(digest)
	if err != nil {
		return false
	}
	_, err = os.Stat(p)
	return err == nil
}

// Open opens the cached archive of digest; ErrNotCached if absent.
func (c Cache) Open(digest string) (*os.File, error) {
	p, err := c.Path(digest)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotCached, digest)
	}
	return f, err
}

// Put stores the archive read from r (at most limit bytes) and returns its
// digest. If want is not empty the content must hash to it, and check (if
// not nil) must accept the file, else nothing is stored. Only the cache
// directory is written.
func (c Cache) Put(r io.Reader, want string, limit int64, check func(path string) error) (string, error) {
	dir := filepath.Join(c.Dir, "sha256")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("chart cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".download-*")
	if err != nil {
		return "", fmt.Errorf("chart cache: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, limit+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if n > limit {
		return "", fmt.Errorf("archive is larger than the limit of %d bytes", limit)
	}
	got := "sha256:" + hex.EncodeToString(h.Sum(nil))
	if want != "" {
		wh, err := parseDigest(want)
		if err != nil {
			return "", err
		}
		if "sha256:"+wh != got {
			return "", fmt.Errorf("digest mismatch: the archive is %s, expected %s", got, want)
		}
	}
	if check != nil {
		if err := check(tmp.Name()); err != nil {
			return "", err
		}
	}
	dest, _ := c.Path(got)
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return "", fmt.Errorf("chart cache: %w", err)
	}
	return got, nil
}

// Clean removes the whole cache (archives and repository indexes).
func (c Cache) Clean() error {
	if c.Dir == "" || c.Dir == "/" {
		return fmt.Errorf("refusing to clean cache directory %q", c.Dir)
	}
	return os.RemoveAll(c.Dir)
}

// load loads the cached chart of digest, checking the bytes still hash to
// it (a cache entry damaged on disk is an error, not a different chart).
func (c Cache) load(digest string) (*chart.Chart, error) {
	f, err := c.Open(digest)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	ch, err := chart.LoadArchive(io.TeeReader(f, h))
	if err != nil {
		return nil, fmt.Errorf("cached chart %s: %w", digest, err)
	}
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("cached chart %s: %w", digest, err)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != digest {
		return nil, fmt.Errorf("cached chart %s is damaged (its content is %s); run `convoy cache clean` and `convoy init`", digest, got)
	}
	return ch, nil
}
