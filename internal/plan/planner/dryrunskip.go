package planner

import (
	"context"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A full plan dry-runs every object: one PATCH each. Most of them, in a
// stack that did not change, only prove that applying the object again
// changes nothing. That is proven without asking the server when all of
// the following hold (docs/performance.md, "Full refresh"):
//
// For the release (appliedIntact):
//   - its newest revision is the deployed one, written by convoy (it
//     carries release.AppliedLabel), and not adopted or interrupted;
//   - the fingerprint of its inputs, computed now, equals the recorded one:
//     the same chart, values, ignore_changes, post-renderer and apply
//     settings, and the same cluster version (the server's defaults and
//     validation are those the deployed revision was applied under);
//   - nobody changed what that revision's apply set: the applied state of
//     its live objects (uid and the field set of convoy's apply entry)
//     equals the recorded one;
//   - no admission webhook or admission policy of the cluster matches the
//     API group of any of its objects: one could mutate or refuse the same
//     object today (a dry run runs them). convoy's own approval policies
//     match only convoy.dev, and so change nothing here.
//
// For the object (skipDryRun):
//   - the rendered object equals the one the deployed revision applied;
//   - its kind is built into the API server, not a custom resource (whose
//     CRD's schema may have changed since: new defaults or validation);
//   - no ignore_changes rule matches it (which fields apply leaves to
//     others depends on who owns them live).
//
// Then the dry run's answer is the live object itself: applying what
// convoy already applied, with nobody having changed it, is a no-op.

// appliedIntact reports whether the release's live objects are as its
// deployed revision's apply left them, as far as skipDryRun needs (see
// above). lives are the live objects of previous (nil: absent).
func (c *computer) appliedIntact(ctx context.Context, rd *release.Renderer, prep *release.Prepared, adopt, interrupted bool, previous, lives []*unstructured.Unstructured) (bool, error) {
	deployed := prep.Deployed
	if deployed == nil || deployed != prep.Last || adopt || interrupted || len(previous) == 0 {
		return false, nil
	}
	label, applied := deployed.Labels[release.FingerprintLabel], deployed.Labels[release.AppliedLabel]
	if label == "" || applied == "" {
		return false, nil
	}
	fp := rd.Fingerprint(prep.Request)
	if fp == "" || release.RevisionFingerprint(fp, deployed.Version) != label {
		return false, nil
	}
	refs := make([]kube.Ref, len(previous))
	for i, o := range previous {
		refs[i] = kube.RefOf(o)
	}
	if rd.AppliedState(refs, lives) != applied {
		return false, nil
	}
	return c.noAdmission(ctx, rd, previous)
}

// skipDryRun reports whether obj's dry run is proven a no-op: intact is
// appliedIntact of its release, prev the object as the deployed revision
// applied it (nil: new in this one).
func skipDryRun(intact bool, obj, prev *unstructured.Unstructured, req *release.Request) bool {
	if !intact || prev == nil {
		return false
	}
	ref := kube.RefOf(obj)
	return builtInGroups[ref.Group] && len(req.IgnoreChanges.For(ref)) == 0 && sameObject(prev, obj)
}

// builtInGroups are the API groups kube-apiserver serves itself. Others
// are custom resources (or aggregated APIs), whose schema the cluster's
// version does not fix. Some CRDs use *.k8s.io groups
// (gateway.networking.k8s.io): hence a list, not a suffix.
var builtInGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true,
	"networking.k8s.io": true, "rbac.authorization.k8s.io": true, "storage.k8s.io": true,
	"scheduling.k8s.io": true, "coordination.k8s.io": true, "discovery.k8s.io": true,
	"node.k8s.io": true, "apiextensions.k8s.io": true, "admissionregistration.k8s.io": true,
	"certificates.k8s.io": true, "flowcontrol.apiserver.k8s.io": true,
}

// admissionResources are what can mutate or refuse an apply beyond the
// API server's built-in defaulting and validation.
var admissionResources = []schema.GroupVersionResource{
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"},
	{Group: "admissionregistration.k8s.io", Version: "v1beta1", Resource: "mutatingadmissionpolicies"},
	{Group: "admissionregistration.k8s.io", Version: "v1alpha1", Resource: "mutatingadmissionpolicies"},
}

// AdmissionScope is what the admission webhooks and policies of a
// cluster match: every API group (All), or Groups.
type AdmissionScope struct {
	All    bool
	Groups map[string]bool
}

// noAdmission reports whether no admission webhook or policy of the
// cluster matches the API group of any of objs, as the plan's view reads
// them (ClusterView.Admission: once per plan).
func (c *computer) noAdmission(ctx context.Context, rd *release.Renderer, objs []*unstructured.Unstructured) (bool, error) {
	scope, err := c.view(rd).Admission(ctx)
	if err != nil || scope.All {
		return false, err
	}
	for _, o := range objs {
		if scope.Groups[o.GroupVersionKind().Group] {
			return false, nil
		}
	}
	return true, nil
}

// previousIntact is appliedIntact of the release rc plans, reading the
// live objects of previous (the deployed revision's) through the plan's
// lists. Only a full plan asks: an incremental one proved the release
// unchanged already, or found that it changed.
func (c *computer) previousIntact(ctx context.Context, rd *release.Renderer, rc *plan.ReleaseChange, prep *release.Prepared, previous []*unstructured.Unstructured) (bool, error) {
	if c.in.Refresh != RefreshFull || len(previous) == 0 || prep.Deployed == nil || prep.Deployed != prep.Last {
		return false, nil
	}
	lives := make([]*unstructured.Unstructured, len(previous))
	if err := c.do(ctx, func() error {
		for i, o := range previous {
			live, err := c.liveShared(ctx, rd, kube.RefOf(o))
			if err != nil {
				return err
			}
			lives[i] = live
		}
		return nil
	}); err != nil {
		return false, err
	}
	return c.appliedIntact(ctx, rd, prep, rc.Adopt, rc.Interrupted != nil, previous, lives)
}
