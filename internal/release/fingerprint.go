package release

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/version"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Labels convoy adds to the records it writes, which Helm keeps as custom
// labels and otherwise ignores. They let a plan tell, without rendering or
// dry runs, that a release is unchanged (docs/performance.md):
const (
	// FingerprintLabel is the fingerprint of what the revision was
	// rendered from (Engine.Fingerprint) and its revision number: a record
	// that another tool copied the label to, as a new revision, does not
	// match it.
	FingerprintLabel = "convoy.dev/fingerprint"
	// AppliedLabel identifies what convoy's field manager owned of the
	// revision's objects right after it applied them (kube.AppliedState):
	// any change to a field it set moves that field to another manager.
	AppliedLabel = "convoy.dev/applied"
)

// labelHashLen is how much of a SHA-256 a label keeps (160 bits; label
// values are at most 63 characters).
const labelHashLen = 40

// Fingerprint is a hash of everything a release's rendering and apply
// depend on but the revision number: the chart's files (with its
// dependencies'), the user values, name and namespace, the cluster's
// capabilities, the post-renderer, the apply settings that shape objects
// and convoy's version. Charts that call lookup, read the clock or random
// numbers render differently from the same inputs (chart.Pure): a plan
// does not rely on their fingerprint. "" when the chart's files are not at
// hand (a chart decoded from a record).
func (e *Engine) Fingerprint(req *Request) string {
	if req.Chart == nil || len(req.Chart.Raw) == 0 {
		return ""
	}
	v := version.Get()
	in := struct {
		Chart           string
		Values          map[string]any
		Name, Namespace string
		Capabilities    *chart.Capabilities
		PostRender      any
		Ignore          any
		DisableHooks    bool
		CreateNamespace bool
		TakeOwnership   bool
		Convoy          string
	}{chartDigest(req.Chart), req.Values, req.Name, req.Namespace, e.caps, req.PostRender, req.IgnoreChanges,
		req.DisableHooks, req.CreateNamespace, req.TakeOwnership, v.Version + "+" + v.Commit}
	b, err := json.Marshal(in)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// RevisionFingerprint is the FingerprintLabel value of a revision rendered
// from inputs with the given fingerprint.
func RevisionFingerprint(fingerprint string, revision int) string {
	if fingerprint == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(fingerprint + "/" + strconv.Itoa(revision)))
	return hex.EncodeToString(sum[:])[:labelHashLen]
}

// chartDigests memoises chartDigest: charts are loaded once per run and
// never modified.
var chartDigests sync.Map // *chart.Chart → string

// chartDigest hashes every file of a chart as loaded, and its
// dependencies'.
func chartDigest(c *chart.Chart) string {
	if d, ok := chartDigests.Load(c); ok {
		return d.(string)
	}
	h := sha256.New()
	for _, f := range c.Raw {
		h.Write([]byte(f.Name))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(len(f.Data))))
		h.Write([]byte{0})
		h.Write(f.Data)
	}
	for _, d := range c.Dependencies() {
		h.Write([]byte("dependency\x00" + chartDigest(d)))
	}
	d := hex.EncodeToString(h.Sum(nil))
	chartDigests.Store(c, d)
	return d
}

// setAppliedState labels rel with the applied state of the objects an
// apply just returned (AppliedLabel).
func setAppliedState(kc *kube.Client, rel *Release, results []kube.Result) {
	refs := make([]kube.Ref, len(results))
	lives := make([]*unstructured.Unstructured, len(results))
	for i, r := range results {
		refs[i], lives[i] = r.Ref, r.Live
	}
	if rel.Labels == nil {
		rel.Labels = map[string]string{}
	}
	rel.Labels[AppliedLabel] = kc.AppliedState(refs, lives)
}
