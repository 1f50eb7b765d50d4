package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/safefile"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// Access makes a Resolver serve a cached chart only to credentials the
// chart's repository serves it to. The cache is content-addressed and may
// be shared by callers that must not read each other's charts (the
// controller's Stacks of several namespaces): a locked chart found in the
// cache is given to Tenant only once its credentials were shown to read
// it, when they downloaded it or by Authorize, which downloads nothing the
// cache holds.
type Access struct {
	// Tenant is who asks (the controller: the Stack's namespace); no
	// tenant is served another's proofs.
	Tenant string
	// Credentials names the credentials of the Resolver's RegistryConfigs
	// (never their content: a Secret's name and a hash). A repository's
	// own credentials are hashed into the proofs' keys.
	Credentials string
	// Who names the asker in messages ("Stack team-b/shop").
	Who string
	// Hint, if set, explains a refusal to the asker (where its
	// credentials are given); "" adds nothing.
	Hint func(error) string
	// Proofs remembers what was shown, shared by every tenant's Resolver.
	Proofs *Proofs
}

// DefaultProofTTL is how long a proof holds when Proofs.TTL is 0: after
// it the repository is asked again, so credentials revoked at the
// repository stop being served the cache within it. A repository that
// does not answer then (down, 5xx) revokes nothing: an expired proof
// still serves until the repository answers with a refusal.
const DefaultProofTTL = time.Hour

// maxProofs bounds the proofs remembered: past it they are forgotten, and
// each asker's next Authorize asks its repository again.
const maxProofs = 10000

// Proofs remembers which credentials of which tenant were shown to read
// which archive digests, for a bounded time. Safe for concurrent use.
type Proofs struct {
	// TTL is how long a proof holds; 0 means DefaultProofTTL.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OnCheck, if set, is called for each check sent to a repository.
	OnCheck func()

	mu sync.Mutex
	m  map[proofKey]time.Time // → when shown
}

type proofKey struct{ tenant, creds, digest string }

func (p *Proofs) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// has says whether k was shown within the TTL (fresh) or ever, as far as
// the proofs remember (known).
func (p *Proofs) has(k proofKey) (fresh, known bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.m[k]
	ttl := p.TTL
	if ttl <= 0 {
		ttl = DefaultProofTTL
	}
	return ok && p.now().Sub(at) < ttl, ok
}

func (p *Proofs) add(k proofKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil || len(p.m) >= maxProofs {
		p.m = map[proofKey]time.Time{}
	}
	p.m[k] = p.now()
}

// AccessError says that a cached chart is not served to an asker whose
// credentials its repository refuses (or serves other content).
type AccessError struct {
	Who     string
	Chart   string // oci://host/path/name, or "name from https://…"
	Version string
	Digest  string
	Err     error
	Hint    string
}

func (e *AccessError) Error() string {
	who := e.Who
	if who == "" {
		who = "the asker"
	}
	return fmt.Sprintf("%s may not pull chart %s %s (%s) from the shared chart cache until its repository serves it to its credentials: %v%s", who, e.Chart, e.Version, e.Digest, e.Err, e.Hint)
}

func (e *AccessError) Unwrap() error { return e.Err }

// proofKey is the key of repo's credentials (with the resolver's) for
// digest. Secrets are hashed, never kept.
func (res *Resolver) proofKey(repo Repository, digest string) proofKey {
	h := sha256.New()
	userinfo := ""
	if u, err := url.Parse(repo.URL); err == nil && u.User != nil {
		userinfo = u.User.String()
	}
	for _, s := range []string{repo.Username, repo.Password, repo.BearerToken, userinfo} {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	for _, f := range []string{repo.CertFile, repo.KeyFile} {
		if f == "" {
			h.Write([]byte("-"))
			continue
		}
		data, err := safefile.Read(f, maxPEMFileSize)
		if err != nil {
			data = []byte("unreadable " + f)
		}
		fmt.Fprintf(h, "%d:%s", len(data), data)
	}
	return proofKey{tenant: res.Access.Tenant, creds: res.Access.Credentials + "/" + hex.EncodeToString(h.Sum(nil)), digest: digest}
}

// proven records that repo's credentials were served the archive of
// digest (they downloaded it, or were served the manifest naming it).
func (res *Resolver) proven(repo Repository, digest string) {
	if res.Access == nil || res.Access.Proofs == nil || digest == "" {
		return
	}
	res.Access.Proofs.add(res.proofKey(repo, digest))
}

// Authorize proves, when res.Access is set, that repo's credentials (with
// the resolver's credential files) may read the locked chart r and each of
// its fetched dependencies (with the credentials Helm passes them), before
// the cache serves them: a proof already held for the tenant, its
// credentials and the digest, or one authenticated request that downloads
// nothing — for an OCI chart the manifest by its locked digest (checked
// to hash to it and to name the locked layer), for a chart repository the
// index (revalidated) giving the locked digest for the version and a HEAD
// of the archive (a GET, hashed, when the index gives no digest or the
// server does not answer HEAD). A refusal is an *AccessError naming the
// chart and Access.Who; a repository that gives no answer refuses only
// those it never served (DefaultProofTTL). Without Access it does
// nothing.
func (res *Resolver) Authorize(ctx context.Context, repo Repository, r Resolved) error {
	if res.Access == nil || res.Access.Proofs == nil {
		return nil
	}
	if r.Source != LocalSource && r.Digest != "" {
		if err := res.authorizeOne(ctx, repo, r); err != nil {
			return err
		}
	}
	for _, d := range r.Dependencies {
		if err := res.Authorize(ctx, dependencyRepository(repo, d.Source), d); err != nil {
			return err
		}
	}
	return nil
}

func (res *Resolver) authorizeOne(ctx context.Context, repo Repository, r Resolved) error {
	p := res.Access.Proofs
	key := res.proofKey(repo, r.Digest)
	fresh, known := p.has(key)
	if fresh {
		return nil
	}
	if p.OnCheck != nil {
		p.OnCheck()
	}
	var err error
	chartRef := r.Source
	if strings.HasPrefix(r.Source, "oci://") {
		err = res.checkOCI(ctx, repo, r)
	} else {
		chartRef = fmt.Sprintf("%s from %s", r.Name, r.Source)
		err = res.checkHTTP(ctx, repo, r)
	}
	if err != nil && known && unanswered(err) {
		// Shown before, and the repository gives no answer now (down,
		// 5xx): an outage revokes nothing; the next Authorize asks again.
		return nil
	}
	if err != nil {
		ae := &AccessError{Who: res.Access.Who, Chart: chartRef, Version: r.Version, Digest: r.Digest, Err: err}
		if res.Access.Hint != nil {
			ae.Hint = res.Access.Hint(err)
		}
		return ae
	}
	p.add(key)
	return nil
}

// checkOCI fetches the manifest of r (by its locked digest, else by its
// version's tag) with repo's credentials: it must name r's layer.
func (res *Resolver) checkOCI(ctx context.Context, repo Repository, r Resolved) error {
	repoRef := strings.TrimPrefix(r.Source, "oci://")
	client, err := res.ociRepository(Request{Repository: repo}, repoRef)
	if err != nil {
		return err
	}
	reference := r.Manifest
	if reference == "" {
		reference = strings.ReplaceAll(r.Version, "+", "_")
	}
	_, layer, err := res.chartManifest(ctx, client, reference, r.Manifest)
	if err != nil {
		return err
	}
	if got := layer.Digest.String(); got != r.Digest {
		return fmt.Errorf("manifest %s names the chart layer %s, not the locked %s", reference, got, r.Digest)
	}
	return nil
}

// checkHTTP asks the repository, with repo's credentials, for its index
// and the archive of r's version.
func (res *Resolver) checkHTTP(ctx context.Context, repo Repository, r Resolved) error {
	client, err := res.httpClient(repo)
	if err != nil {
		return err
	}
	indexPath, err := res.fetchIndex(ctx, client, repo)
	if err != nil {
		return err
	}
	entries, err := indexEntries(indexPath, r.Name)
	if err != nil {
		return fmt.Errorf("index of %s: %w", redactURL(repo.URL), err)
	}
	var e *indexEntry
	for _, x := range entries {
		if x != nil && x.Version == r.Version {
			e = x
			break
		}
	}
	if e == nil || len(e.URLs) == 0 {
		return fmt.Errorf("the index of %s has no download of version %s of chart %q", redactURL(repo.URL), r.Version, r.Name)
	}
	archiveURL, err := resolveReference(repo.URL, e.URLs[0])
	if err != nil {
		return err
	}
	if e.Digest != "" {
		if want := "sha256:" + strings.TrimPrefix(e.Digest, "sha256:"); want != r.Digest {
			return fmt.Errorf("the index gives version %s the digest %s", r.Version, want)
		}
		resp, err := res.send(ctx, client, repo, http.MethodHead, archiveURL, nil, res.maxArchive())
		if err == nil {
			resp.Body.Close()
			return nil
		}
		var se *statusError
		if !errors.As(err, &se) || se.code != http.StatusMethodNotAllowed && se.code != http.StatusNotImplemented {
			return err
		}
	}
	resp, err := res.get(ctx, client, repo, archiveURL, nil, res.maxArchive())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(resp.Body, res.maxArchive()+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", redactURL(archiveURL), err)
	}
	if n > res.maxArchive() {
		return fmt.Errorf("GET %s: larger than the limit of %d bytes", redactURL(archiveURL), res.maxArchive())
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != r.Digest {
		return fmt.Errorf("GET %s: the archive is %s", redactURL(archiveURL), got)
	}
	return nil
}

// unanswered says whether err is the repository giving no answer (a
// connection failure, a timeout, a 5xx) rather than a refusal or other
// content.
func unanswered(err error) bool {
	var re *errcode.ErrorResponse
	if errors.As(err, &re) {
		return re.StatusCode >= 500
	}
	var se *statusError
	if errors.As(err, &se) {
		return se.code >= 500
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded)
}
