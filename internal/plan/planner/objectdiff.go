package planner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// objects diffs the release's objects against the live cluster. With
// unchanged (the rendering equals the deployed revision's), the objects are
// the deployed ones: whatever differs live is drift, and appliedState is
// release.AppliedLabel's value for the live objects.
//
// Objects of the kinds in uncompared (group/kind: their CRDs are replaced
// first, crds = "create_replace") are listed without a comparison: the API
// server would judge them by the CRD it has now.
func (c *computer) objects(ctx context.Context, rd *release.Renderer, rc *plan.ReleaseChange, prep *release.Prepared, red *sensitive.Redactor, unchanged bool, uncompared map[string]bool) (appliedState string, err error) {
	req := prep.Request
	previous := release.WithOwnership(prep.Previous, prep.PreviousOwner(), req.Namespace)
	prevBy := map[string]*unstructured.Unstructured{}
	for _, o := range previous {
		prevBy[identityKey(kube.RefOf(o))] = o
	}
	current := prep.Objects
	// Verify compares live objects restricted to what the saved (next)
	// revision applies: the fields ignore_changes leaves to others may
	// change meanwhile.
	nextBy := map[string]*unstructured.Unstructured{}
	for _, o := range prep.Objects {
		nextBy[identityKey(kube.RefOf(o))] = req.IgnoreChanges.Strip(o)
	}
	if unchanged {
		current = previous
	}
	type result struct {
		change   *plan.ObjectChange
		drift    *plan.ObjectDrift
		warning  string
		conflict *plan.ObjectConflict
		ref      kube.Ref
		observed plan.ObservedObject
		// elsewhere is the missing namespace of a new object validated
		// in kube.ValidationNamespace.
		elsewhere string
		live      *unstructured.Unstructured
	}
	var items []*unstructured.Unstructured
	items = append(items, current...)
	inCurrent := map[string]bool{}
	for _, o := range current {
		inCurrent[identityKey(kube.RefOf(o))] = true
	}
	var gone []*unstructured.Unstructured
	for _, o := range previous {
		if !inCurrent[identityKey(kube.RefOf(o))] && !release.IsKept(o) {
			gone = append(gone, o)
		}
	}
	left, err := c.leftovers(ctx, rd, prep.History, prep.Deployed, func(ref kube.Ref) bool {
		k := identityKey(ref)
		return inCurrent[k] || prevBy[k] != nil
	})
	if err != nil {
		return "", err
	}
	intact, err := c.previousIntact(ctx, rd, rc, prep, previous)
	if err != nil {
		return "", err
	}
	results := make([]result, len(items)+len(gone)+len(left))
	errs := make([]error, len(results))
	var wg sync.WaitGroup
	for i, obj := range items {
		wg.Go(func() {
			errs[i] = c.do(ctx, func() error {
				ref := kube.RefOf(obj)
				res := &results[i]
				res.ref = ref
				// The plan's own object, only read here: diffObject
				// copies it for a dry run.
				live, err := c.liveShared(ctx, rd, ref)
				if err != nil {
					return err
				}
				res.live = live
				res.observed = observeContent(ref, live)
				if next := nextBy[identityKey(ref)]; next != nil && live != nil {
					res.observed = observeShape(ref, live, next.Object)
				}
				if uncompared[ref.Group+"/"+ref.Kind] {
					res.change = uncomparedChange(ref, live, prep.TemplateOf(ref))
					return nil
				}
				prev := prevBy[identityKey(ref)]
				if live == nil {
					if res.elsewhere, res.warning, err = c.validateNew(ctx, rd, obj, req); err != nil {
						return inTemplate(prep.TemplateOf(ref), err)
					}
				}
				if prev == nil && live != nil && !req.TakeOwnership {
					if owner, ns := ownerRelease(live); owner != "" && (owner != req.Name || ns != req.Namespace) {
						res.conflict = &plan.ObjectConflict{Ref: plan.ObjectRef(ref), OwnerRelease: owner, OwnerNamespace: ns}
					}
				}
				ch, drift, warn, err := c.diffObject(ctx, rd, obj, prev, live, req, red, intact, unchanged)
				if err != nil {
					return inTemplate(prep.TemplateOf(ref), err)
				}
				ch.Template = prep.TemplateOf(ref)
				if res.conflict != nil {
					warn = "" // a refusal, not a warning
				}
				res.change, res.drift, res.warning = ch, drift, cmp.Or(warn, res.warning)
				return nil
			})
		})
	}
	for j, obj := range gone {
		i := len(items) + j
		wg.Go(func() {
			errs[i] = c.do(ctx, func() error {
				ref := kube.RefOf(obj)
				live, err := c.live(ctx, rd, ref)
				if err != nil || live == nil {
					return err
				}
				ch := objectChange(ref, plan.ObjectDelete)
				ch.Before = maskObject(liveView(live), red, append(secretPaths(ref.Kind), red.FieldsOf(ref.Group, ref.Kind, ref.Namespace, ref.Name)...))
				results[i] = result{ref: ref, observed: observeContent(ref, live), change: ch}
				return nil
			})
		})
	}
	for j, l := range left {
		i := len(items) + len(gone) + j
		wg.Go(func() {
			errs[i] = c.do(ctx, func() error {
				live, err := c.live(ctx, rd, l.ref)
				// Only what still carries the release's ownership is the
				// release's to delete, and never a kept object.
				if err != nil || live == nil || !ownedByRelease(live, req.Name, req.Namespace) || release.IsKept(live) {
					return err
				}
				ch := objectChange(l.ref, plan.ObjectDelete)
				ch.Reason, ch.LeftBy = fmt.Sprintf("left over by %s revision %d", l.status, l.by), l.by
				ch.Before = maskObject(liveView(live), red, append(secretPaths(l.ref.Kind), red.FieldsOf(l.ref.Group, l.ref.Kind, l.ref.Namespace, l.ref.Name)...))
				results[i] = result{ref: l.ref, observed: observeContent(l.ref, live), change: ch}
				return nil
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	if unchanged {
		refs := make([]kube.Ref, len(items))
		lives := make([]*unstructured.Unstructured, len(items))
		for i := range items {
			refs[i], lives[i] = results[i].ref, results[i].live
		}
		appliedState = rd.AppliedState(refs, lives)
	}
	var elsewhere []string
	for _, r := range results {
		if r.ref == (kube.Ref{}) {
			continue
		}
		if r.elsewhere != "" {
			elsewhere = append(elsewhere, r.elsewhere)
		}
		rc.Observed.Objects = append(rc.Observed.Objects, r.observed)
		if r.change != nil {
			rc.Objects = append(rc.Objects, r.change)
		}
		if r.drift != nil {
			rc.Drift = append(rc.Drift, r.drift)
		}
		if r.warning != "" {
			rc.Warnings = append(rc.Warnings, r.warning)
		}
		if r.conflict != nil {
			rc.Conflicts = append(rc.Conflicts, *r.conflict)
		}
	}
	rc.Warnings = append(rc.Warnings, missingNamespaces(elsewhere, req, items)...)
	return appliedState, nil
}

func identityKey(r kube.Ref) string { return r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name }

func getLive(ctx context.Context, kc *kube.Client, ref kube.Ref) (*unstructured.Unstructured, error) {
	live, err := kc.Get(ctx, ref)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// diffObject computes one object's change (live → dry-run of the new
// object) and its drift: the fields convoy last applied (without those
// ignore_changes leaves to others), applied again, against live. Fields
// only other managers set (a controller's annotations, defaults) are never
// drift. Changed fields name the field manager that wrote the live value.
// live is the plan's object, shared (not modified here).
// intact is appliedIntact of the release: dry runs proven no-ops are
// skipped (dryrunskip.go). unchanged is objects': the release is planned
// unchanged, its objects' Before and After dropped unless drift or what
// failed revisions left makes it an upgrade, planned again.
func (c *computer) diffObject(ctx context.Context, rd *release.Renderer, obj, prev, live *unstructured.Unstructured, req *release.Request, red *sensitive.Redactor, intact, unchanged bool) (*plan.ObjectChange, *plan.ObjectDrift, string, error) {
	ref := kube.RefOf(obj)
	secret := append(secretPaths(ref.Kind), red.FieldsOf(ref.Group, ref.Kind, ref.Namespace, ref.Name)...)
	if live == nil {
		ch := objectChange(ref, plan.ObjectCreate)
		ch.Diff = plan.Compare(map[string]any{}, normalize(obj))
		plan.MaskDiff(ch.Diff, red, secret...)
		ch.After = maskObject(normalize(obj), red, secret)
		var drift *plan.ObjectDrift
		if prev != nil {
			drift = &plan.ObjectDrift{Ref: plan.ObjectRef(ref), Missing: true, Corrected: true}
		}
		return ch, drift, "", nil
	}
	var warning string
	if prev == nil && !ownedByRelease(live, req.Name, req.Namespace) && !req.TakeOwnership {
		warning = fmt.Sprintf("%s exists and is not owned by release %s: apply refuses to adopt it unless take_ownership = true", ref, req.Name)
	}
	if skipDryRun(intact, obj, prev, req) {
		// Applying obj is proven to leave live as it is, and obj is the
		// object the deployed revision applied: there is neither a change
		// nor drift to compare, only live to keep (as a dry run answering
		// live would have it), and not even that in a release planned
		// unchanged, whose objects keep no Before or After (release).
		c.stats.add(&c.stats.DryRunsSkipped, 1)
		ch := objectChange(ref, plan.ObjectNoOp)
		if !unchanged {
			ch.After = maskObject(normalizedView(live), red, secret)
			ch.Before = maskObject(liveView(live), red, secret)
		}
		return ch, nil, warning, nil
	}
	live = live.DeepCopy() // the plan's, shared: a dry run may keep it
	dr, err := c.dryRun(ctx, rd, obj, live, req.IgnoreChanges)
	if err != nil {
		return nil, nil, "", err
	}
	liveN := normalize(live)
	ch := objectChange(ref, plan.ObjectUpdate)
	if dr.immutable != nil {
		ch.Action = plan.ObjectReplace
		base := liveN
		if prev != nil {
			base = normalize(prev)
		}
		ch.Diff = plan.Compare(base, normalize(obj))
		ch.Reason = red.Text(dr.immutable.Error())
		ch.After = maskObject(normalize(obj), red, secret)
	} else {
		after := normalize(dr.after)
		ch.Diff = plan.Compare(liveN, after)
		if ch.Diff.Empty() {
			ch.Action = plan.ObjectNoOp
			// The dry run answered what is live: the plan keeps the
			// live object's copy only (a large release's objects are
			// each about its size again).
			after = liveN
		}
		setManagers(ch.Diff, rd, live)
		ch.After = maskObject(after, red, secret)
	}
	ch.Before = maskObject(liveView(live), red, secret)
	plan.MaskDiff(ch.Diff, red, secret...)
	if prev == nil {
		return ch, nil, warning, nil
	}
	applied := dr
	if !sameObject(prev, obj) {
		if applied, err = c.dryRun(ctx, rd, prev, live, req.IgnoreChanges); err != nil {
			return nil, nil, "", err
		}
	}
	if applied.after == nil {
		return ch, nil, warning, nil
	}
	owned := req.IgnoreChanges.Strip(prev).Object
	d := plan.Compare(projectSet(normalize(applied.after), owned), projectSet(liveN, owned))
	if d.Empty() {
		return ch, nil, warning, nil
	}
	setManagers(d, rd, live)
	plan.MaskDiff(d, red, secret...)
	drift := &plan.ObjectDrift{Ref: plan.ObjectRef(ref), Diff: d, Corrected: true}
	changed := map[string]bool{}
	if ch.Diff != nil {
		for _, c := range ch.Diff.Changes {
			changed[c.Path] = true
		}
	}
	// A drifted field apply leaves as it is: the new revision either stops
	// setting it, or sets it to the live value (a chart that reads it back
	// through lookup, as a kept password).
	var sets any
	if dr.after != nil {
		sets = projectSet(normalize(dr.after), req.IgnoreChanges.Strip(obj).Object)
	}
	var dropped, adopted bool
	for _, c := range d.Changes {
		if changed[c.Path] || ch.Action == plan.ObjectReplace {
			continue
		}
		drift.Corrected = false
		if _, ok := pointerAt(c.Path, sets); ok {
			adopted = true
		} else {
			dropped = true
		}
	}
	switch {
	case dropped && adopted:
		drift.Note = "the revision being applied sets some of these fields to their live values and no longer sets the others: they keep their live values"
	case adopted:
		drift.Note = "the revision being applied sets these fields to their live values"
	case dropped:
		drift.Note = "the revision being applied no longer sets these fields: they keep their live values"
	}
	return ch, drift, warning, nil
}
