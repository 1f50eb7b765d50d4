package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/version"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
// capabilities (its version only, for charts whose templates do not read
// .Capabilities), the post-renderer, the apply settings that shape objects
// (the crds policy too) and convoy's version. Charts that read the clock
// or random numbers render differently from the same inputs: a plan does
// not rely on their fingerprint; those that call lookup are proven by
// their lookups' answers too (Settle). "" when the chart's files are not
// at hand (a chart decoded from a record).
func (e *Renderer) Fingerprint(req *Request) string { return fingerprintWith(req, e.caps) }

// fingerprintWith is Fingerprint with the cluster's capabilities caps.
func fingerprintWith(req *Request, caps *chart.Capabilities) string {
	if req.Chart == nil || req.Chart.Digest() == "" {
		return ""
	}
	v := version.Get()
	if !req.Chart.UsesCapabilities() {
		// Only Chart.yaml's kubeVersion constraint sees the cluster.
		caps = &chart.Capabilities{KubeVersion: caps.KubeVersion}
	}
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
		ExpandClaims    bool      `json:",omitempty"`
		CRDs            CRDPolicy `json:",omitempty"`
	}{req.Chart.Digest(), req.Values, req.Name, req.Namespace, caps, req.PostRender, req.IgnoreChanges,
		req.DisableHooks, req.CreateNamespace, req.TakeOwnership, v.Version + "+" + v.Commit, req.ExpandClaims, req.CRDs}
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

// setAppliedState labels rel with the applied state of the objects an
// apply just returned (AppliedLabel).
func setAppliedState(kc *kube.Client, rel *Release, results []kube.Result) {
	refs := make([]kube.Ref, len(results))
	for i, r := range results {
		refs[i] = r.Ref
	}
	if rel.Labels == nil {
		rel.Labels = map[string]string{}
	}
	rel.Labels[AppliedLabel] = kc.AppliedState(refs, lives(results))
}

// Relabel sets labels on revision of a release's records when it is still
// the deployed one, without touching what the record holds: a metadata
// patch conditioned on the record's resourceVersion. It writes no
// revision. Apply uses it to label releases planned unchanged
// (plan.ReleaseChange.Relabel).
func (e *Engine) Relabel(ctx context.Context, namespace, name string, revision int, labels map[string]string) error {
	if err := checkFence(ctx); err != nil {
		return err
	}
	key := recordKey(name, revision)
	if e.sql != nil {
		if err := e.sqlRelabel(ctx, namespace, key, labels); err != nil {
			return fmt.Errorf("label release %s revision %d: %w", name, revision, err)
		}
		return nil
	}
	gvr, _ := e.recordResource()
	records := e.meta.Resource(gvr).Namespace(namespace)
	meta, err := records.Get(ctx, key, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("label release %s revision %d: %w", name, revision, err)
	}
	if Status(meta.Labels["status"]) != StatusDeployed {
		return nil // changed since the plan: the next plan finds out
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels, "resourceVersion": meta.ResourceVersion}})
	if err != nil {
		return err
	}
	_, err = records.Patch(ctx, key, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: RecordFieldManager})
	if apierrors.IsConflict(err) {
		return nil // written since it was read: the next plan finds out
	}
	if err != nil {
		return fmt.Errorf("label release %s revision %d: %w", name, revision, err)
	}
	return nil
}
