package planner

import (
	"context"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// unchanged plans a release as unchanged without rendering it or asking
// for dry runs, when that can be proven (docs/performance.md):
//   - its newest revision is the deployed one, and convoy wrote it;
//   - what it would be rendered from now has the fingerprint recorded on
//     that revision (release.FingerprintLabel): chart files, values, name,
//     namespace, capabilities, post-renderer, convoy's version;
//   - that revision's rendering called no clock or random function
//     outside test hooks (chart.Rendered.Volatile: such records carry no
//     fingerprint), each object its lookups read is as it was when the
//     revision was deployed (release.LookupsAnnotation), and no exec
//     post-renderer changes its output;
//   - nobody changed what that revision's apply set on its objects since
//     (release.AppliedLabel against the live objects, read through the
//     plan's lists).
//
// It reports false when any of these does not hold: the release is then
// planned in full, which finds what changed. The result is what the full
// plan of an unchanged release says.
func (c *computer) unchanged(ctx context.Context, rd *release.Renderer, rc *plan.ReleaseChange, req *release.Request, last, deployed *release.Release, red *sensitive.Redactor) (bool, error) {
	why, err := c.provenUnchanged(ctx, rd, rc, req, last, deployed, red)
	if err != nil || why == "" {
		return why == "", err
	}
	c.stats.full(rc.Addr.String(), why)
	return false, nil
}

// provenUnchanged plans rc as unchanged when that can be proven (see
// unchanged), or says why not.
func (c *computer) provenUnchanged(ctx context.Context, rd *release.Renderer, rc *plan.ReleaseChange, req *release.Request, last, deployed *release.Release, red *sensitive.Redactor) (string, error) {
	if why := c.inputsUnchanged(rd, req, last, deployed, rc.Interrupted != nil, rc.Adopt); why != "" {
		return why, nil
	}
	applied := deployed.Labels[release.AppliedLabel]
	content := c.in.Observe == ObserveContent
	// With ObserveContent the manifest is parsed, for the objects' shapes,
	// and for policies over objects, which see what it holds; otherwise
	// the record's objects annotation says what they are.
	var parsed []*unstructured.Unstructured
	var objs []release.RecordObject
	var removed bool
	var err error
	if content || c.in.PolicyObjects {
		// The manifest is in the record's payload: read it whole.
		if deployed, err = c.loadRecord(ctx, rd, deployed); err != nil {
			return "", err
		}
		parsed, objs, removed, err = parseRecord(rd, deployed)
	} else {
		objs, removed, err = c.recordObjects(ctx, rd, deployed)
	}
	if err != nil {
		return "record-unreadable", nil // the full plan says what is wrong with it
	}
	if removed {
		// An upgrade would compare it as its successor, and helm's fails
		// (resource mapping not found): the full plan says so.
		return "stored-api-removed", nil
	}
	refs := make([]kube.Ref, len(objs))
	lives := make([]*kube.Applied, len(objs))
	var full []*unstructured.Unstructured // the live objects, for ObserveContent
	if content {
		full = make([]*unstructured.Unstructured, len(objs))
	}
	lookups, _ := release.LookupsOf(deployed)
	lookupsMoved := false
	if err := c.do(ctx, func() error {
		// What the chart's lookups found when the revision was settled
		// (release.Engine.Settle): found again, the chart renders as
		// deployed.
		for _, l := range lookups {
			live, err := c.liveApplied(ctx, rd, l.Ref)
			if err != nil {
				return err
			}
			if (live == nil && l.UID != "") || (live != nil && (live.UID != l.UID || live.ResourceVersion != l.ResourceVersion)) {
				lookupsMoved = true
				return nil
			}
		}
		for i, o := range objs {
			refs[i] = o.Ref
			if !content {
				live, err := c.liveApplied(ctx, rd, o.Ref)
				if err != nil {
					return err
				}
				lives[i] = live
				continue
			}
			live, err := c.liveShared(ctx, rd, o.Ref)
			if err != nil {
				return err
			}
			if full[i] = live; live != nil {
				lives[i] = kube.AppliedOf(rd.FieldManager(), live)
			}
		}
		return nil
	}); err != nil {
		return "", err
	}
	if lookupsMoved {
		return "lookups-changed", nil
	}
	crds, why, err := c.crdsUnchanged(ctx, rd, req, deployed)
	if err != nil || why != "" {
		return why, err
	}
	if kube.AppliedStateOf(refs, lives) != applied {
		return "live-objects-changed", nil
	}
	observed := make([]plan.ObservedObject, len(objs))
	for i, ref := range refs {
		observed[i] = observeApplied(ref, lives[i])
	}
	if content {
		// What the saved plan's verification compares when an object's
		// resourceVersion moved: the fields the revision applies.
		for i, o := range parsed {
			if full[i] != nil {
				observed[i] = observeShape(refs[i], full[i], req.IgnoreChanges.Strip(o).Object)
			}
		}
	}

	c.stats.add(&c.stats.Unchanged, 1)
	rc.Action = plan.ActionNoOp
	rc.Chart.After = chartRef(req.Chart)
	var rendered *chart.Rendered
	if deployed.Partial() {
		// Read from the record's metadata alone: its fingerprint covers
		// the chart's files and the values, so the deployed revision's
		// chart is this one and its values these (what the full plan
		// compares finds no change). The rendering is not kept: a plan
		// that is not saved never applies the release, and a saved one
		// (ObserveContent) reads the record whole.
		rc.Chart.Before = rc.Chart.After
		rendered = &chart.Rendered{Chart: req.Chart}
	} else {
		rc.Chart.Before = chartRef(deployed.Chart)
		rc.Values = plan.Compare(orEmpty(deployed.Config), orEmpty(req.Values))
		plan.MaskValues(rc.Values, red)
		rendered = &chart.Rendered{Manifests: release.RecordManifests(deployed.Manifest), Chart: deployed.Chart, Notes: deployed.Info.Notes}
	}
	rc.Saved = &plan.SavedRelease{Rendered: rendered, Settings: SettingsOf(req)}
	rc.Objects = append(rc.Objects, crds...)
	for i, o := range objs {
		ch := objectChange(refs[i], plan.ObjectNoOp)
		ch.Template = o.Template
		if c.in.PolicyObjects {
			ch.Deployed = deployedView(parsed[i], red)
		}
		rc.Objects = append(rc.Objects, ch)
	}
	rc.Observed.Objects = append(rc.Observed.Objects, observed...)
	return "", nil
}

// inputsUnchanged says why a release cannot be proven unchanged from its
// records and its inputs alone ("" when it can be, if its live objects
// are as applied): the first checks of provenUnchanged, which
// predictChange repeats to predict a plan's record reads (records.go). It sets
// req.Fingerprint when it computes it.
func (c *computer) inputsUnchanged(rd *release.Renderer, req *release.Request, last, deployed *release.Release, interrupted, adopt bool) string {
	switch {
	case c.in.Refresh != RefreshIncremental:
		return "refresh-full"
	case last == nil:
		return "not-installed"
	case deployed != last || interrupted:
		return "newest-not-deployed"
	case adopt:
		return "adopted"
	case deployed.Rewritten():
		// Its payload was written since convoy labelled it: the labels
		// may not say what it holds (a manifest naming a removed API).
		return "record-rewritten"
	case req.PostRender.Exec != nil:
		return "exec-post-renderer"
	case len(req.Chart.CRDFiles()) > 0 && !hasCRDsRecord(deployed):
		return "crds"
	}
	label, applied := deployed.Labels[release.FingerprintLabel], deployed.Labels[release.AppliedLabel]
	if label == "" || applied == "" {
		return "no-fingerprint"
	}
	req.Fingerprint = rd.Fingerprint(req)
	if release.RevisionFingerprint(req.Fingerprint, deployed.Version) != label {
		return "inputs-changed"
	}
	return ""
}

// recordObjects are the objects of a record and the templates they came
// from: from its ObjectsAnnotation, else parsed from its manifest (a
// record helm or an older convoy wrote, read whole for it). removed: the
// record names an API version the cluster no longer serves (its
// manifest is then parsed, its objects read as their successors').
func (c *computer) recordObjects(ctx context.Context, rd *release.Renderer, rec *release.Release) (objs []release.RecordObject, removed bool, err error) {
	if objs, ok := release.RecordObjectsOf(rec); ok && !rd.NamesRemovedAPI(objs) {
		return objs, false, nil
	}
	rec, err = c.loadRecord(ctx, rd, rec)
	if err != nil {
		return nil, false, err
	}
	_, objs, removed, err = parseRecord(rd, rec)
	return objs, removed, err
}

// parseRecord parses a record's manifest: its objects as apply applies
// them (those of a removed API version as its successor's), what they
// are, and whether it names a removed API version.
func parseRecord(rd *release.Renderer, rec *release.Release) ([]*unstructured.Unstructured, []release.RecordObject, bool, error) {
	parsed, paths, mapped, err := rd.RecordObjectsAPIs(rec)
	if err != nil {
		return nil, nil, false, err
	}
	objs := make([]release.RecordObject, len(parsed))
	for i, o := range parsed {
		objs[i] = release.RecordObject{Ref: kube.RefOf(o), Template: paths[i]}
	}
	return parsed, objs, len(mapped) > 0, nil
}

// AppliedHash identifies what convoy's field manager applied of a live
// object (kube.AppliedStateOf of it alone: uid and the manager's field
// set): saved-plan verification compares it when the object's
// resourceVersion moved. A status write or another manager's field leaves
// it as it is; an edit of a field convoy set moves that field to the
// editor, and changes it.
func AppliedHash(ref kube.Ref, live *kube.Applied) string {
	return kube.AppliedStateOf([]kube.Ref{ref}, []*kube.Applied{live})
}

// relabel returns the labels that would let later plans prove the
// release unchanged, when its deployed record lacks them or holds others
// (a capability or convoy's version changed since, or an older convoy or
// helm wrote it): rc is planned unchanged in full, so the rendering equals
// the deployed revision's and nothing drifted.
func relabel(deployed, last *release.Release, rc *plan.ReleaseChange, req *release.Request, rendered *chart.Rendered, appliedState string) map[string]string {
	if deployed == nil || deployed != last || rc.Adopt || rc.Interrupted != nil || req.Fingerprint == "" || appliedState == "" ||
		rendered.Impure || req.PostRender.Exec != nil {
		return nil
	}
	want := map[string]string{
		release.FingerprintLabel: release.RevisionFingerprint(req.Fingerprint, deployed.Version),
		release.AppliedLabel:     appliedState,
	}
	if deployed.Labels[release.FingerprintLabel] == want[release.FingerprintLabel] && deployed.Labels[release.AppliedLabel] == want[release.AppliedLabel] {
		return nil
	}
	return want
}
