package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/convoy-sh/convoy/internal/safefile"
)

// indexEntry is the part of an index.yaml chart version convoy reads.
type indexEntry struct {
	Name    string   `yaml:"name"`
	Version string   `yaml:"version"`
	URLs    []string `yaml:"urls"`
	Digest  string   `yaml:"digest"`
}

type indexFile struct {
	APIVersion string                   `yaml:"apiVersion"`
	Entries    map[string][]*indexEntry `yaml:"entries"`
}

type indexMeta struct {
	URL          string `json:"url"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
}

func (res *Resolver) resolveHTTP(ctx context.Context, req Request) (Resolved, error) {
	repo := req.Repository
	client, err := res.httpClient(repo)
	if err != nil {
		return Resolved{}, err
	}
	indexPath, err := res.fetchIndex(ctx, client, repo)
	if err != nil {
		return Resolved{}, fmt.Errorf("%s: %w", req.describe(), err)
	}
	entries, err := indexEntries(indexPath, req.Chart)
	if err != nil {
		return Resolved{}, fmt.Errorf("%s: index of %s: %w", req.describe(), redactURL(repo.URL), err)
	}
	if len(entries) == 0 {
		return Resolved{}, fmt.Errorf("%s: the repository has no chart %q", req.describe(), req.Chart)
	}
	var versions []string
	byVersion := map[string]*indexEntry{}
	for _, e := range entries {
		if e == nil {
			continue
		}
		versions = append(versions, e.Version)
		if byVersion[e.Version] == nil {
			byVersion[e.Version] = e
		}
	}
	v, err := pickVersion(req.Constraint, versions)
	if err != nil {
		return Resolved{}, fmt.Errorf("%s: %w", req.describe(), err)
	}
	e := byVersion[v]
	if len(e.URLs) == 0 {
		return Resolved{}, fmt.Errorf("%s: version %s has no download URL in the index", req.describe(), v)
	}
	want := ""
	if e.Digest != "" {
		want = "sha256:" + strings.TrimPrefix(e.Digest, "sha256:")
		if _, err := parseDigest(want); err != nil {
			return Resolved{}, fmt.Errorf("%s: version %s: index %w", req.describe(), v, err)
		}
	}
	r := Resolved{Source: repo.URL, Name: req.Chart, Version: v, Digest: want}
	if want != "" && res.Cache.Has(want) {
		return r, nil
	}
	archiveURL, err := resolveReference(repo.URL, e.URLs[0])
	if err != nil {
		return Resolved{}, fmt.Errorf("%s: version %s: %w", req.describe(), v, err)
	}
	body, err := res.get(ctx, client, repo, archiveURL, nil, res.maxArchive())
	if err != nil {
		return Resolved{}, fmt.Errorf("%s: download version %s: %w", req.describe(), v, err)
	}
	defer body.Body.Close()
	got, err := res.Cache.Put(body.Body, want, res.maxArchive(), checkArchive(req.Chart, v))
	if err != nil {
		return Resolved{}, fmt.Errorf("%s: download version %s from %s: %w", req.describe(), v, redactURL(archiveURL), err)
	}
	r.Digest = got
	res.proven(repo, got)
	return r, nil
}

// resolveReference resolves an index URL against the repository URL as
// Helm does (relative URLs are relative to the repository directory).
func resolveReference(repoURL, ref string) (string, error) {
	base, err := url.Parse(strings.TrimSuffix(repoURL, "/") + "/")
	if err != nil {
		return "", fmt.Errorf("repository URL: %w", err)
	}
	u, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("index URL %q: %w", ref, err)
	}
	return base.ResolveReference(u).String(), nil
}

// RedactURL drops the password of user information from a URL (for
// messages and the lock file).
func RedactURL(s string) string { return redactURL(s) }

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

// get sends a GET with the repository's credentials (only to the
// repository's own host, as Helm does without --pass-credentials) and
// refuses bodies declared larger than limit.
func (res *Resolver) get(ctx context.Context, client *http.Client, repo Repository, target string, header http.Header, limit int64) (*http.Response, error) {
	return res.send(ctx, client, repo, http.MethodGet, target, header, limit)
}

// send is get with another method (HEAD).
func (res *Resolver) send(ctx context.Context, client *http.Client, repo Repository, method, target string, header http.Header, limit int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, nil)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, redactURL(target), err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("User-Agent", "convoy")
	if sameHost(repo.URL, target) {
		switch {
		case repo.BearerToken != "":
			req.Header.Set("Authorization", "Bearer "+repo.BearerToken)
		case repo.Username != "" || repo.Password != "":
			req.SetBasicAuth(repo.Username, repo.Password)
		default:
			// Credentials written into the repository URL go to the
			// archives on its host too (their URLs in the index lack them).
			if u, err := url.Parse(repo.URL); err == nil && u.User != nil {
				pw, _ := u.User.Password()
				req.SetBasicAuth(u.User.Username(), pw)
			}
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// url.Error repeats the URL; keep the cause and a clean URL.
			return nil, fmt.Errorf("%s %s: %w", method, redactURL(target), ue.Err)
		}
		return nil, fmt.Errorf("%s %s: %w", method, redactURL(target), err)
	}
	if resp.StatusCode == http.StatusNotModified {
		return resp, nil
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = " (check the repository's credentials)"
		}
		return nil, &statusError{method: method, url: redactURL(target), status: resp.Status, code: resp.StatusCode, hint: hint}
	}
	if resp.ContentLength > limit {
		resp.Body.Close()
		return nil, fmt.Errorf("%s %s: the server announces %d bytes, more than the limit of %d", method, redactURL(target), resp.ContentLength, limit)
	}
	return resp, nil
}

func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Host == ub.Host
}

// fetchIndex returns the path of the repository's index in the cache,
// revalidating the cached copy with ETag / Last-Modified. The body streams
// to a file in the cache; it is never held in memory.
func (res *Resolver) fetchIndex(ctx context.Context, client *http.Client, repo Repository) (string, error) {
	sum := sha256.Sum256([]byte(repo.URL))
	dir := filepath.Join(res.Cache.Dir, "index", hex.EncodeToString(sum[:16]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("index cache: %w", err)
	}
	indexPath := filepath.Join(dir, "index.yaml")
	metaPath := filepath.Join(dir, "meta.json")
	header := http.Header{}
	var meta indexMeta
	if data, err := os.ReadFile(metaPath); err == nil && json.Unmarshal(data, &meta) == nil && meta.URL == repo.URL {
		if _, err := os.Stat(indexPath); err == nil {
			if meta.ETag != "" {
				header.Set("If-None-Match", meta.ETag)
			}
			if meta.LastModified != "" {
				header.Set("If-Modified-Since", meta.LastModified)
			}
		}
	}
	indexURL, err := resolveReference(repo.URL, "index.yaml")
	if err != nil {
		return "", err
	}
	resp, err := res.get(ctx, client, repo, indexURL, header, res.maxIndex())
	if err != nil {
		return "", fmt.Errorf("fetch index: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		tmp, err := os.CreateTemp(dir, ".index-*")
		if err != nil {
			return "", fmt.Errorf("index cache: %w", err)
		}
		defer os.Remove(tmp.Name())
		n, err := io.Copy(tmp, io.LimitReader(resp.Body, res.maxIndex()+1))
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("fetch index %s: %w", redactURL(indexURL), err)
		}
		if n > res.maxIndex() {
			return "", fmt.Errorf("fetch index %s: larger than the limit of %d bytes", redactURL(indexURL), res.maxIndex())
		}
		if err := os.Rename(tmp.Name(), indexPath); err != nil {
			return "", fmt.Errorf("index cache: %w", err)
		}
		meta = indexMeta{URL: repo.URL, ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
		if data, err := json.Marshal(meta); err == nil {
			writeFileAtomic(metaPath, data)
		}
	}
	return indexPath, nil
}

// writeFileAtomic writes through a temporary file and a rename; failures
// are ignored by callers for which the file is only an optimisation.
func writeFileAtomic(path string, data []byte) error { return safefile.WriteAtomic(path, data, 0o644) }

// statusError is a repository's answer other than 200 or 304.
type statusError struct {
	method, url, status, hint string
	code                      int
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: %s%s", e.method, e.url, e.status, e.hint)
}
