package run

import (
	"context"
	"fmt"
	"strings"

	"github.com/convoy-sh/convoy/internal/kube"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/planner"
	"github.com/convoy-sh/convoy/internal/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// StaleError says why a saved plan may not be applied: what changed since
// it was computed.
type StaleError struct {
	Changes []string
}

func (e *StaleError) Error() string {
	return "the saved plan is stale, run convoy plan again:\n  - " + strings.Join(e.Changes, "\n  - ")
}

// observer is what verifying a saved plan reads of a cluster: the release
// records of a namespace and live objects. A cluster's release engine is
// one (engineObserver); tests use an in-memory one.
type observer interface {
	// Histories returns the records of every release of the namespace, by
	// name, oldest first.
	Histories(ctx context.Context, namespace string) (map[string][]*release.Release, error)
	// Get returns the live object; a NotFound error when there is none.
	Get(ctx context.Context, ref kube.Ref) (*unstructured.Unstructured, error)
	// Parse decodes a rendered manifest into objects, namespaced as the
	// cluster serves their kinds.
	Parse(manifest, namespace string) ([]*unstructured.Unstructured, error)
	// FieldManager is the field manager convoy applies with on the
	// cluster (planner.AppliedHash).
	FieldManager() string
	// ListPage lists one page of a kind's objects in a namespace as
	// metadata (kube.Client.ListAppliedPage): complete is false when
	// there are more.
	ListPage(ctx context.Context, apiVersion, kind, namespace string) (map[string]*kube.Applied, bool, error)
}

// engineObserver reads a cluster through its release engine.
type engineObserver struct{ *release.Engine }

func (e engineObserver) Get(ctx context.Context, ref kube.Ref) (*unstructured.Unstructured, error) {
	return e.Kube().Get(ctx, ref)
}

func (e engineObserver) FieldManager() string { return e.Kube().FieldManager() }

func (e engineObserver) ListPage(ctx context.Context, apiVersion, kind, namespace string) (map[string]*kube.Applied, bool, error) {
	return e.Kube().ListAppliedPage(ctx, apiVersion, kind, namespace)
}

func (e engineObserver) Parse(manifest, namespace string) ([]*unstructured.Unstructured, error) {
	return e.Kube().Parse(manifest, namespace)
}

// VerifyObserved is verifyObserved on the clusters' release engines
// (engineFor returns a cluster block's): what apply checks of a saved
// plan's observations.
func VerifyObserved(ctx context.Context, p *plan.Plan, engineFor func(cluster string) (*release.Engine, error)) error {
	return verifyObserved(ctx, p, func(cluster string) (observer, error) {
		eng, err := engineFor(cluster)
		if err != nil {
			return nil, err
		}
		return engineObserver{eng}, nil
	})
}

// verifyObserved refuses a plan whose observations no longer hold: a
// release with a newer (or differently finished) revision, an affected
// object created, deleted or edited since. Status updates and fields apply
// does not set do not count: an object whose resourceVersion moved is
// compared on the fields the saved revision applies. It returns a
// *StaleError naming every change, each once.
func verifyObserved(ctx context.Context, p *plan.Plan, observerFor func(cluster string) (observer, error)) error {
	var stale []string
	seen := map[string]bool{}
	note := func(msg string) {
		if msg != "" && !seen[msg] {
			seen[msg] = true
			stale = append(stale, msg)
		}
	}
	histories := map[string]map[string][]*release.Release{}
	listed, err := listObserved(ctx, p, observerFor)
	if err != nil {
		return err
	}
	for _, r := range p.Releases {
		obs, err := observerFor(r.Cluster)
		if err != nil {
			return err
		}
		key := r.Cluster + "/" + r.Namespace
		hs, ok := histories[key]
		if !ok {
			if hs, err = obs.Histories(ctx, r.Namespace); err != nil {
				return fmt.Errorf("verify the plan: %w", err)
			}
			histories[key] = hs
		}
		if r.Rename != nil {
			note(renameChange(r, hs))
		} else {
			note(revisionChange(r, hs[r.Name]))
		}
		shapes := savedShapes(obs, r)
		for _, ob := range r.Observed.Objects {
			msg, err := objectMoved(ctx, obs, ob, shapes[ob.Ref], listed.of(r.Cluster, ob.Ref))
			if err != nil {
				return fmt.Errorf("verify the plan: %w", err)
			}
			note(msg)
		}
	}
	if len(stale) > 0 {
		return &StaleError{Changes: stale}
	}
	return nil
}

func revisionChange(r *plan.ReleaseChange, hist []*release.Release) string {
	rev, status := 0, ""
	if len(hist) > 0 {
		last := hist[len(hist)-1]
		rev, status = last.Version, string(last.Info.Status)
	}
	if rev == r.Observed.LastRevision && status == r.Observed.LastStatus {
		return ""
	}
	what := fmt.Sprintf("release %s (namespace %s)", r.Name, r.Namespace)
	switch {
	case r.Observed.LastRevision == 0:
		return fmt.Sprintf("%s was installed since the plan (now revision %d, %s)", what, rev, status)
	case rev == 0:
		return fmt.Sprintf("%s was uninstalled since the plan (the plan saw revision %d, %s)", what, r.Observed.LastRevision, r.Observed.LastStatus)
	case rev != r.Observed.LastRevision:
		return fmt.Sprintf("%s has a new revision %d (%s) since the plan saw revision %d (%s)", what, rev, status, r.Observed.LastRevision, r.Observed.LastStatus)
	}
	return fmt.Sprintf("%s revision %d is now %s; the plan saw it %s", what, rev, status, r.Observed.LastStatus)
}

// savedShapes are the objects the saved rendering applies, by reference,
// with the ownership metadata apply adds and without the fields
// ignore_changes leaves to others (what the shape hash was computed
// against).
func savedShapes(obs observer, r *plan.ReleaseChange) map[plan.ObjectRef]map[string]any {
	out := map[plan.ObjectRef]map[string]any{}
	if r.Saved == nil || r.Saved.Rendered == nil {
		return out
	}
	ignore := planner.RequestOf(r.Name, r.Namespace, r.Saved.Settings).IgnoreChanges
	for _, m := range r.Saved.Rendered.Manifests {
		objs, err := obs.Parse(m.Document(), r.Namespace)
		if err != nil {
			continue // kinds not served yet: compared by content
		}
		for _, o := range release.WithOwnership(objs, r.Name, r.Namespace) {
			out[planner.ObjectRef(kube.RefOf(o))] = ignore.Strip(o).Object
		}
	}
	return out
}

func objectMoved(ctx context.Context, obs observer, ob plan.ObservedObject, shape map[string]any, meta *listedObject) (string, error) {
	want := ob.ResourceVersion
	if meta != nil {
		a := meta.applied
		switch {
		case a == nil && want == "":
			return "", nil
		case a == nil:
			return fmt.Sprintf("%s was deleted since the plan", ob.Ref), nil
		case want == "":
			return fmt.Sprintf("%s was created since the plan", ob.Ref), nil
		case a.ResourceVersion == want:
			return "", nil
		case strings.HasPrefix(ob.Hash, planner.AppliedPrefix):
			if planner.AppliedHash(planner.KubeRef(ob.Ref), a) == ob.Hash {
				return "", nil
			}
			return fmt.Sprintf("%s was edited since the plan (resourceVersion %s, now %s)", ob.Ref, want, a.ResourceVersion), nil
		}
		// Compared by content: read whole below.
	}
	live, err := obs.Get(ctx, planner.KubeRef(ob.Ref))
	switch {
	case apierrors.IsNotFound(err):
		if want == "" {
			return "", nil
		}
		return fmt.Sprintf("%s was deleted since the plan", ob.Ref), nil
	case err != nil:
		return "", err
	case want == "":
		return fmt.Sprintf("%s was created since the plan", ob.Ref), nil
	case live.GetResourceVersion() == want:
		return "", nil
	}
	if ob.Hash != "" {
		got := planner.ContentHash(live)
		switch {
		case strings.HasPrefix(ob.Hash, planner.AppliedPrefix):
			// Proven unchanged from metadata: an edit of a field convoy
			// set moved it to another manager, a recreation changed the
			// uid.
			got = planner.AppliedHash(planner.KubeRef(ob.Ref), kube.AppliedOf(obs.FieldManager(), live))
		case strings.HasPrefix(ob.Hash, planner.ShapePrefix) && shape != nil:
			got = planner.ShapeHash(live, shape)
		}
		if got == ob.Hash {
			return "", nil // nothing apply touches changed: status, bookkeeping, others' fields
		}
	}
	return fmt.Sprintf("%s was edited since the plan (resourceVersion %s, now %s)", ob.Ref, want, live.GetResourceVersion()), nil
}

// listMin is how many observed objects of one kind in one namespace
// verification reads with one list (one page of metadata) instead of a GET
// each.
const listMin = 3

// listedObject is what one page of metadata says of an observed object:
// applied nil when it is absent.
type listedObject struct{ applied *kube.Applied }

// listedObjects are the observed objects whose kind and namespace were
// listed, by cluster and reference; those a list could not answer (not
// listed, or not in an incomplete page) are not in it.
type listedObjects map[string]map[plan.ObjectRef]*listedObject

func (l listedObjects) of(cluster string, ref plan.ObjectRef) *listedObject {
	return l[cluster][ref]
}

// listObserved lists, one page of metadata each, the kinds and
// namespaces a plan observed listMin or more objects of (a first install
// of a few releases in one namespace: its ConfigMaps, its Deployments),
// instead of a GET per object. An object missing from a page that holds
// every object of the kind there is absent; one missing from an
// incomplete page, or whose list failed (a client allowed to get but not
// to list), is read by itself.
func listObserved(ctx context.Context, p *plan.Plan, observerFor func(cluster string) (observer, error)) (listedObjects, error) {
	type group struct {
		cluster, apiVersion, kind, namespace string
	}
	refs := map[group][]plan.ObjectRef{}
	var order []group
	for _, r := range p.Releases {
		for _, ob := range r.Observed.Objects {
			if ob.Ref.Namespace == "" {
				continue // cluster-scoped: a list would read every one in the cluster
			}
			g := group{r.Cluster, ob.Ref.APIVersion(), ob.Ref.Kind, ob.Ref.Namespace}
			if _, ok := refs[g]; !ok {
				order = append(order, g)
			}
			refs[g] = append(refs[g], ob.Ref)
		}
	}
	out := listedObjects{}
	for _, g := range order {
		if len(refs[g]) < listMin {
			continue
		}
		obs, err := observerFor(g.cluster)
		if err != nil {
			return nil, err
		}
		page, complete, err := obs.ListPage(ctx, g.apiVersion, g.kind, g.namespace)
		if err != nil {
			continue // read one by one
		}
		if out[g.cluster] == nil {
			out[g.cluster] = map[plan.ObjectRef]*listedObject{}
		}
		for _, ref := range refs[g] {
			a, ok := page[ref.Name]
			if ok || complete {
				out[g.cluster][ref] = &listedObject{applied: a}
			}
		}
	}
	return out, nil
}
