package planner

import (
	"context"
	"sync"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/memo"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// listMin is how many observed objects of one kind in one namespace
// verification reads with one list (one page of metadata) instead of a GET
// each.
const listMin = 3

// VerifyView is the ObservedView of a real cluster for one verification
// of a saved plan (run.VerifyObserved): it reads the API server, never a
// cache (the controller's informers may be a moment behind what apply is
// about to overwrite). The kinds and namespaces the plan observed listMin
// or more objects of (a first install of a few releases in one namespace:
// its ConfigMaps, its Deployments; Prefetch counts them) are read from one
// page of metadata instead of a GET each. An object missing from a page
// that holds every object of the kind there is absent; one missing from
// an incomplete page, or whose list failed (a client allowed to get but
// not to list), is read by itself. Each object is read whole at most once.
// Release records are read as metadata (Engine.HistoriesNow): verifying
// reads their revisions and statuses, not the charts and manifests they
// hold.
func VerifyView(eng *release.Engine) ObservedView {
	return newVerifyView(eng.HistoriesNow, eng.Kube())
}

// objectReads are the reads of live objects a verifyView makes
// (*kube.Client's).
type objectReads interface {
	// Get returns the live object, or a NotFound error.
	Get(ctx context.Context, ref kube.Ref) (*unstructured.Unstructured, error)
	// ListAppliedPage lists one page of a kind's objects in a namespace
	// as metadata: complete is false when there are more.
	ListAppliedPage(ctx context.Context, apiVersion, kind, namespace string) (map[string]*kube.Applied, bool, error)
	FieldManager() string
}

type verifyView struct {
	histories func(ctx context.Context, namespace string) (map[string][]*release.Release, error)
	reads     objectReads

	mu     sync.Mutex
	counts map[listKey]int // observed objects by kind and namespace (Prefetch)

	pages memo.Map[listKey, listedPage]
	gets  memo.Map[kube.Ref, *unstructured.Unstructured]
}

func newVerifyView(histories func(context.Context, string) (map[string][]*release.Release, error), reads objectReads) *verifyView {
	return &verifyView{histories: histories, reads: reads, counts: map[listKey]int{}}
}

// listKey is a kind in a namespace.
type listKey struct{ apiVersion, kind, namespace string }

func listKeyOf(ref kube.Ref) listKey {
	return listKey{ref.APIVersion(), ref.Kind, ref.Namespace}
}

// listedPage is one page of metadata; not ok when the list failed.
type listedPage struct {
	objects      map[string]*kube.Applied
	ok, complete bool
}

func (v *verifyView) Histories(ctx context.Context, namespace string) (map[string][]*release.Release, error) {
	return v.histories(ctx, namespace)
}

// Prefetch counts the objects Applied will be asked of, by kind and
// namespace; it reads nothing.
func (v *verifyView) Prefetch(_ context.Context, refs []kube.Ref) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, ref := range refs {
		if ref.Namespace != "" { // cluster-scoped: a list would read every one in the cluster
			v.counts[listKeyOf(ref)]++
		}
	}
}

// Applied answers from the page of ref's kind and namespace when one is
// listed and answers it, else from the object read whole.
func (v *verifyView) Applied(ctx context.Context, ref kube.Ref) (*kube.Applied, error) {
	if a, ok := v.listed(ctx, ref); ok {
		return a, nil
	}
	live, err := v.Live(ctx, ref)
	if live == nil || err != nil {
		return nil, err
	}
	return kube.AppliedOf(v.reads.FieldManager(), live), nil
}

// listed is ref's metadata from the page of its kind and namespace, when
// the plan observed listMin or more of them and the page answers (ok).
func (v *verifyView) listed(ctx context.Context, ref kube.Ref) (*kube.Applied, bool) {
	key := listKeyOf(ref)
	v.mu.Lock()
	n := v.counts[key]
	v.mu.Unlock()
	if ref.Namespace == "" || n < listMin {
		return nil, false
	}
	page, _ := v.pages.Get(key, func() (listedPage, error) {
		objs, complete, err := v.reads.ListAppliedPage(ctx, key.apiVersion, key.kind, key.namespace)
		if err != nil {
			return listedPage{}, nil // read one by one
		}
		return listedPage{objects: objs, ok: true, complete: complete}, nil
	})
	if !page.ok {
		return nil, false
	}
	a, found := page.objects[ref.Name]
	return a, found || page.complete
}

// Live reads the object (nil: absent), once.
func (v *verifyView) Live(ctx context.Context, ref kube.Ref) (*unstructured.Unstructured, error) {
	return v.gets.Get(ref, func() (*unstructured.Unstructured, error) {
		live, err := v.reads.Get(ctx, ref)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return live, err
	})
}
