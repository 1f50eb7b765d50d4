package plannertest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// What a test does to set a scene: convoy's applies and deploys, other
// tools' writes, admission configured.

// Apply makes obj live as convoy's apply would: merged over the live
// object, convoy's field manager owning every field obj sets, taken from
// the others.
func (v *View) Apply(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ref := kube.RefOf(obj)
	live, err := v.Live(ctx, ref)
	if err != nil {
		return nil, err
	}
	return v.write(ctx, merged(obj, live), forced(v.ownersOf(ref), v.kc.FieldManager(), metav1.ManagedFieldsOperationApply, fieldsOf(obj.Object), true))
}

// Put makes obj live as another tool made it (OtherManager): convoy owns
// none of it.
func (v *View) Put(ctx context.Context, obj *unstructured.Unstructured) error {
	_, err := v.write(ctx, obj, []owner{{manager: OtherManager, op: metav1.ManagedFieldsOperationUpdate, fields: fieldsOf(obj.Object)}})
	return err
}

// Edit changes a live object as `kubectl edit` would (EditAs
// OtherManager).
func (v *View) Edit(ctx context.Context, ref kube.Ref, edit func(*unstructured.Unstructured)) error {
	return v.EditAs(ctx, OtherManager, ref, edit)
}

// EditAs changes a live object as an update by field manager would
// (`kubectl scale` as "kubectl", a controller as itself): the manager
// takes the fields the edit changes or adds from whoever owned them; those
// it removes are nobody's.
func (v *View) EditAs(ctx context.Context, manager string, ref kube.Ref, edit func(*unstructured.Unstructured)) error {
	live, err := v.Live(ctx, ref)
	if err != nil {
		return err
	}
	if live == nil {
		return fmt.Errorf("%s: not found", ref)
	}
	before := fieldsOf(live.Object)
	edited := live.DeepCopy()
	edit(edited)
	now := fieldsOf(edited.Object)
	changed := map[string]any{}
	for path, val := range now {
		if was, ok := before[path]; !ok || !jsonEqual(was, val) {
			changed[path] = val
		}
	}
	var removed []string
	for path := range before {
		if _, ok := now[path]; !ok {
			removed = append(removed, path)
		}
	}
	owners := without(v.ownersOf(ref), removed)
	if len(changed) > 0 {
		owners = forced(owners, manager, metav1.ManagedFieldsOperationUpdate, changed, false)
	}
	_, err = v.write(ctx, edited, owners)
	return err
}

// Delete removes a live object.
func (v *View) Delete(ctx context.Context, ref kube.Ref) error {
	res, err := v.resource(ref)
	if err != nil {
		return err
	}
	v.mu.Lock()
	delete(v.owners, ref)
	v.mu.Unlock()
	return res.Delete(ctx, ref.Name, metav1.DeleteOptions{})
}

// SetAdmission says which API groups the cluster's admission webhooks and
// policies match from now on ("*": every group; none: no admission), as
// creating or deleting a webhook configuration does (Options.Admission).
func (v *View) SetAdmission(groups ...string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.admission = slices.Clone(groups)
}

// Deploy installs or upgrades a release as a successful convoy apply
// would leave it: renders req with the engine, applies its objects
// (Apply; the fields its ignore_changes lists left as kube's apply leaves
// them), supersedes the deployed revision and records the new one
// deployed, with its fingerprint, applied state and objects annotation.
// Hooks are not run and nothing waits.
func (v *View) Deploy(ctx context.Context, req *release.Request) (*release.Release, error) {
	hist, err := v.Records.Storage(req.Namespace).History(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	prep, err := v.eng.PrepareWithHistory(ctx, req, hist)
	if err != nil {
		return nil, err
	}
	return v.deploy(ctx, prep)
}

// DeployRendered is Deploy of output rendered earlier, as convoy apply
// PLANFILE applies a saved plan's release (plan.SavedRelease: req from
// its settings, rendered its payload): nothing is rendered again.
func (v *View) DeployRendered(ctx context.Context, req *release.Request, rendered *chart.Rendered) (*release.Release, error) {
	hist, err := v.Records.Storage(req.Namespace).History(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	prep, err := v.eng.PrepareRenderedWithHistory(req, hist, rendered)
	if err != nil {
		return nil, err
	}
	return v.deploy(ctx, prep)
}

// deploy applies a prepared release and records it deployed.
func (v *View) deploy(ctx context.Context, prep *release.Prepared) (*release.Release, error) {
	req := prep.Request
	if err := v.writeCRDs(ctx, prep); err != nil {
		return nil, err
	}
	lives := make([]*unstructured.Unstructured, len(prep.Objects))
	for i, o := range prep.Objects {
		live, err := v.Live(ctx, kube.RefOf(o))
		if err != nil {
			return nil, err
		}
		if lives[i], err = v.Apply(ctx, v.leave(o, live, req.IgnoreChanges.For(kube.RefOf(o)))); err != nil {
			return nil, err
		}
	}
	store := v.Records.Storage(req.Namespace)
	for _, r := range prep.History {
		if r.Info.Status != release.StatusDeployed {
			continue
		}
		r.Info.Status = release.StatusSuperseded
		if err := store.Update(ctx, r); err != nil {
			return nil, err
		}
	}
	rec := v.eng.DeployedRecordOf(prep, lives, time.Now())
	v.eng.Settle(ctx, prep, rec)
	if err := store.Create(ctx, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// leave is obj as convoy's apply applies it when paths are left to other
// managers (ignore_changes) and live exists: a field another manager owns,
// or nobody, is left out; one only convoy owns (set when the object was
// created) is applied with its live value, as kube's apply does.
func (v *View) leave(obj, live *unstructured.Unstructured, paths []kube.Pointer) *unstructured.Unstructured {
	if len(paths) == 0 || live == nil {
		return obj
	}
	out := obj.DeepCopy()
	for _, p := range paths {
		if _, set := lookup(out.Object, p); !set {
			continue
		}
		if val, ok := lookup(live.Object, p); ok && v.soleOwner(live, p) && setAt(out.Object, p, runtime.DeepCopyJSONValue(val)) {
			continue
		}
		removeAt(out.Object, p)
	}
	return out
}

// soleOwner reports whether convoy's field manager owns the field at p of
// live and no other manager does.
func (v *View) soleOwner(live *unstructured.Unstructured, p kube.Pointer) bool {
	ours := false
	for _, o := range kube.OwnersOf(live, p) {
		if !v.kc.IsOwn(o) {
			return false
		}
		ours = true
	}
	return ours
}

// lookup is the value at p in obj.
func lookup(obj any, p kube.Pointer) (any, bool) {
	for _, tok := range p {
		switch c := obj.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, false
			}
			obj = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			obj = c[i]
		default:
			return nil, false
		}
	}
	return obj, true
}

// setAt sets the value at p in obj, whose parent exists.
func setAt(obj map[string]any, p kube.Pointer, val any) bool {
	if len(p) == 0 {
		return false
	}
	parent, ok := lookup(obj, p[:len(p)-1])
	if !ok {
		return false
	}
	switch c := parent.(type) {
	case map[string]any:
		c[p[len(p)-1]] = val
		return true
	case []any:
		i, err := strconv.Atoi(p[len(p)-1])
		if err != nil || i < 0 || i >= len(c) {
			return false
		}
		c[i] = val
		return true
	}
	return false
}

// removeAt removes the field at p from obj, and the maps it leaves empty.
func removeAt(obj map[string]any, p kube.Pointer) {
	if len(p) == 0 {
		return
	}
	parent, ok := lookup(obj, p[:len(p)-1])
	if !ok {
		return
	}
	last := p[len(p)-1]
	switch c := parent.(type) {
	case map[string]any:
		delete(c, last)
		if len(c) == 0 && len(p) > 1 {
			removeAt(obj, p[:len(p)-1])
		}
	case []any:
		if i, err := strconv.Atoi(last); err == nil && i >= 0 && i < len(c) {
			setAt(obj, p[:len(p)-1], append(c[:i:i], c[i+1:]...))
		}
	}
}

// writeCRDs writes the chart's crds/ as a deploy of prep does: none under
// crds = "skip"; those absent on install (create); all under
// create_replace. CRDs add no kinds to the View.
func (v *View) writeCRDs(ctx context.Context, prep *release.Prepared) error {
	policy := prep.Request.CRDs
	if policy == release.CRDsSkip || (policy != release.CRDsCreateReplace && !prep.IsInstall) {
		return nil
	}
	for _, f := range prep.Rendered.CRDs {
		objs, err := v.kc.Parse(string(f.Data), "")
		if err != nil {
			return err
		}
		for _, o := range objs {
			live, err := v.Live(ctx, kube.RefOf(o))
			if err != nil {
				return err
			}
			if live != nil && policy != release.CRDsCreateReplace {
				continue
			}
			if _, err := v.Apply(ctx, o); err != nil {
				return err
			}
		}
	}
	return nil
}
