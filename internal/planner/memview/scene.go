package memview

import (
	"context"
	"fmt"
	"time"

	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What a test does to set a scene: convoy's applies and deploys, other
// tools' writes.

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

// Deploy installs or upgrades a release as a successful convoy apply
// would leave it: renders req with the engine, applies its objects
// (Apply), supersedes the deployed revision and records the new one
// deployed, with its fingerprint, applied state and objects annotation.
// Hooks are not run and nothing waits.
func (v *View) Deploy(ctx context.Context, req *release.Request) (*release.Release, error) {
	store := v.Records.Storage(req.Namespace)
	hist, err := store.History(ctx, req.Name)
	if err != nil {
		return nil, err
	}
	prep, err := v.eng.PrepareWithHistory(ctx, req, hist)
	if err != nil {
		return nil, err
	}
	lives := make([]*unstructured.Unstructured, len(prep.Objects))
	for i, o := range prep.Objects {
		if lives[i], err = v.Apply(ctx, o); err != nil {
			return nil, err
		}
	}
	for _, r := range hist {
		if r.Info.Status != release.StatusDeployed {
			continue
		}
		r.Info.Status = release.StatusSuperseded
		if err := store.Update(ctx, r); err != nil {
			return nil, err
		}
	}
	rec := v.eng.DeployedRecordOf(prep, lives, time.Now())
	if err := store.Create(ctx, rec); err != nil {
		return nil, err
	}
	return rec, nil
}
