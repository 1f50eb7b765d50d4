package planner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/cluster/release/releasetest"
	"github.com/convoy-sh/convoy/internal/plan"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// fakeCluster is a cluster's records and live objects in memory, read
// through a verifyView (fakeCluster.verify), so that what the view reads
// is counted.
type fakeCluster struct {
	records map[string]map[string][]*release.Release
	objects map[kube.Ref]*unstructured.Unstructured
	err     error
	// pageSize bounds ListPage's pages (0: no bound); listErr fails it.
	pageSize int
	listErr  error
	// gets and lists count the reads of objects.
	gets, lists int
}

func (f *fakeCluster) Histories(_ context.Context, namespace string) (map[string][]*release.Release, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.records[namespace], nil
}

func (f *fakeCluster) Get(_ context.Context, ref kube.Ref) (*unstructured.Unstructured, error) {
	f.gets++
	if o, ok := f.objects[ref]; ok {
		return o.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: ref.Group, Resource: strings.ToLower(ref.Kind) + "s"}, ref.Name)
}

func (f *fakeCluster) FieldManager() string { return "convoy" }

func (f *fakeCluster) ListAppliedPage(_ context.Context, apiVersion, kind, namespace string) (map[string]*kube.Applied, bool, error) {
	f.lists++
	if f.listErr != nil {
		return nil, false, f.listErr
	}
	var names []string
	for ref := range f.objects {
		if ref.GroupVersionKind().GroupVersion().String() == apiVersion && ref.Kind == kind && ref.Namespace == namespace {
			names = append(names, ref.Name)
		}
	}
	slices.Sort(names)
	complete := true
	if f.pageSize > 0 && len(names) > f.pageSize {
		names, complete = names[:f.pageSize], false
	}
	out := map[string]*kube.Applied{}
	for _, n := range names {
		ref := kube.Ref{Version: "v1", Kind: kind, Namespace: namespace, Name: n}
		if gv, err := schema.ParseGroupVersion(apiVersion); err == nil {
			ref.Group, ref.Version = gv.Group, gv.Version
		}
		out[n] = kube.AppliedOf("convoy", f.objects[ref])
	}
	return out, complete, nil
}

func parseManifest(manifest, namespace string) ([]*unstructured.Unstructured, error) {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &m); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetNamespace() == "" {
		u.SetNamespace(namespace)
	}
	return []*unstructured.Unstructured{u}, nil
}

const cmManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
data:
  message: hello
`

var cmRef = kube.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "web"}

// liveConfigMap is the ConfigMap as apply left it: the rendered object
// with Helm's ownership metadata and the server's bookkeeping.
func liveConfigMap(t *testing.T, rv string) *unstructured.Unstructured {
	t.Helper()
	objs, err := parseManifest(cmManifest, "shop")
	if err != nil {
		t.Fatal(err)
	}
	o := release.WithOwnership(objs, "web", "shop")[0]
	o.SetResourceVersion(rv)
	o.SetUID("uid-1")
	return o
}

// verify is Verify of p against the fake cluster, and the StaleError
// its changes make (nil: none).
func (f *fakeCluster) verify(t *testing.T, p *plan.Plan) error {
	t.Helper()
	v, err := releasetest.New("memory", "v1.36.0", releasetest.DefaultResources())
	if err != nil {
		t.Fatal(err)
	}
	c := VerifyCluster{View: newVerifyView(f.Histories, f), Renderer: v.Engine.Renderer}
	moved, err := Verify(context.Background(), p, func(string) (VerifyCluster, error) { return c, nil })
	if err != nil {
		return err
	}
	if len(moved) > 0 {
		return &staleError{moved}
	}
	return nil
}

// staleError is what run.StaleError says of the changes Verify returns.
type staleError struct{ changes []string }

func (e *staleError) Error() string { return strings.Join(e.changes, "; ") }

func record(name string, version int, status release.Status) *release.Release {
	return &release.Release{Name: name, Namespace: "shop", Version: version, Info: &release.Info{Status: status}}
}

// savedWeb is a saved plan of release web upgrading over revision 1, with
// what it observed of the ConfigMap it applies.
func savedWeb(t *testing.T, live *unstructured.Unstructured) *plan.Plan {
	t.Helper()
	rc := &plan.ReleaseChange{
		Addr: plan.RemovedAddr("", "shop", "web"), Name: "web", Namespace: "shop", Action: plan.ActionUpgrade,
		Observed: plan.Observed{LastRevision: 1, LastStatus: "deployed"},
		Saved: &plan.SavedRelease{
			Rendered: &chart.Rendered{Manifests: []chart.Manifest{{Path: "web/templates/cm.yaml", Content: cmManifest, APIVersion: "v1", Kind: "ConfigMap", Name: "web"}}},
		},
	}
	ob := observeAbsent(cmRef)
	if live != nil {
		objs, _ := parseManifest(cmManifest, "shop")
		shape := release.WithOwnership(objs, "web", "shop")[0].Object
		ob = observeShape(cmRef, live, shape)
	}
	rc.Observed.Objects = []plan.ObservedObject{ob}
	return &plan.Plan{Stack: "shop", Releases: []*plan.ReleaseChange{rc}}
}

// checkStale fails t unless err is a stale plan saying stale, or nil
// when stale is "".
func checkStale(t *testing.T, err error, stale string) {
	t.Helper()
	var se *staleError
	switch {
	case stale == "" && err != nil:
		t.Fatalf("refused a plan that holds: %v", err)
	case stale != "" && (!errors.As(err, &se) || !strings.Contains(err.Error(), stale)):
		t.Fatalf("got %v, want a stale plan saying %q", err, stale)
	}
}

func TestVerify(t *testing.T) {
	deployed := func() map[string]map[string][]*release.Release {
		return map[string]map[string][]*release.Release{"shop": {"web": {record("web", 1, release.StatusDeployed)}}}
	}
	for _, tc := range []struct {
		name string
		// plan is made against a ConfigMap at resourceVersion 10 (nil:
		// the plan saw none); change edits the fake cluster afterwards.
		planSawNone bool
		change      func(t *testing.T, c *fakeCluster)
		stale       string // "" when the plan still holds
	}{
		{name: "nothing moved"},
		{name: "a new revision", change: func(t *testing.T, c *fakeCluster) {
			c.records["shop"]["web"] = append(c.records["shop"]["web"], record("web", 2, release.StatusDeployed))
		}, stale: "release web (namespace shop) has a new revision 2 (deployed) since the plan saw revision 1 (deployed)"},
		{name: "uninstalled", change: func(t *testing.T, c *fakeCluster) {
			delete(c.records["shop"], "web")
		}, stale: "release web (namespace shop) was uninstalled since the plan (the plan saw revision 1, deployed)"},
		{name: "the same revision finished otherwise", change: func(t *testing.T, c *fakeCluster) {
			c.records["shop"]["web"][0].Info.Status = release.StatusFailed
		}, stale: "release web (namespace shop) revision 1 is now failed; the plan saw it deployed"},
		{name: "an object deleted", change: func(t *testing.T, c *fakeCluster) {
			delete(c.objects, cmRef)
		}, stale: "v1 ConfigMap shop/web was deleted since the plan"},
		{name: "an object created", planSawNone: true, stale: "v1 ConfigMap shop/web was created since the plan"},
		{name: "a field apply sets edited", change: func(t *testing.T, c *fakeCluster) {
			o := c.objects[cmRef]
			_ = unstructured.SetNestedField(o.Object, "edited", "data", "message")
			o.SetResourceVersion("11")
		}, stale: "v1 ConfigMap shop/web was edited since the plan (resourceVersion 10, now 11)"},
		{name: "a controller's annotation", change: func(t *testing.T, c *fakeCluster) {
			o := c.objects[cmRef]
			a := o.GetAnnotations()
			a["example.com/seen-by"] = "a-controller"
			o.SetAnnotations(a)
			o.SetResourceVersion("11")
		}},
		{name: "only bookkeeping", change: func(t *testing.T, c *fakeCluster) {
			o := c.objects[cmRef]
			o.SetResourceVersion("12")
			o.SetGeneration(3)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeCluster{records: deployed(), objects: map[kube.Ref]*unstructured.Unstructured{cmRef: liveConfigMap(t, "10")}}
			var p *plan.Plan
			if tc.planSawNone {
				p = savedWeb(t, nil)
			} else {
				p = savedWeb(t, c.objects[cmRef])
			}
			if tc.change != nil {
				tc.change(t, c)
			}
			checkStale(t, c.verify(t, p), tc.stale)
		})
	}
}

// Two releases that observed the same object name its change once.
func TestVerifyNamesEachChangeOnce(t *testing.T) {
	c := &fakeCluster{
		records: map[string]map[string][]*release.Release{"shop": {"web": {record("web", 1, release.StatusDeployed)}}},
		objects: map[kube.Ref]*unstructured.Unstructured{cmRef: liveConfigMap(t, "10")},
	}
	p := savedWeb(t, c.objects[cmRef])
	twin := *p.Releases[0]
	p.Releases = append(p.Releases, &twin)
	delete(c.objects, cmRef)
	err := c.verify(t, p)
	var se *staleError
	if !errors.As(err, &se) || len(se.changes) != 1 {
		t.Fatalf("want one change, got %v", err)
	}
}

// A cluster that cannot be read is an error, never a stale (or fresh) plan.
func TestVerifyReportsReadErrors(t *testing.T) {
	c := &fakeCluster{err: errors.New("connection refused")}
	err := c.verify(t, savedWeb(t, nil))
	var se *staleError
	if err == nil || errors.As(err, &se) || !strings.Contains(err.Error(), "verify the plan: connection refused") {
		t.Fatalf("got %v", err)
	}
}

// A plan that proved a release unchanged from metadata observed its
// objects by what convoy's field manager applied of them
// (planner.AppliedHash): what others write does not make it stale; an
// edit of a field convoy set (which moves it to the editor) or a
// recreation does.
func TestVerifyAppliedHash(t *testing.T) {
	convoyOwns := func(fields string) []metav1.ManagedFieldsEntry {
		return []metav1.ManagedFieldsEntry{{Manager: "convoy", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}}
	}
	const both = `{"f:data":{"f:message":{},"f:other":{}}}`
	for _, tc := range []struct {
		name   string
		change func(o *unstructured.Unstructured)
		stale  string
	}{
		{name: "nothing moved"},
		{name: "a controller's annotation and status", change: func(o *unstructured.Unstructured) {
			o.SetAnnotations(map[string]string{"example.com/seen-by": "a-controller"})
			o.SetManagedFields(append(convoyOwns(both), metav1.ManagedFieldsEntry{Manager: "a-controller", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{}}}`)}}))
		}},
		{name: "a field convoy set taken by kubectl", change: func(o *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(o.Object, "edited", "data", "message")
			o.SetManagedFields(append(convoyOwns(`{"f:data":{"f:other":{}}}`), metav1.ManagedFieldsEntry{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:message":{}}}`)}}))
		}, stale: "v1 ConfigMap shop/web was edited since the plan (resourceVersion 10, now 11)"},
		{name: "deleted and created again", change: func(o *unstructured.Unstructured) {
			o.SetUID("uid-2")
		}, stale: "v1 ConfigMap shop/web was edited since the plan (resourceVersion 10, now 11)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := liveConfigMap(t, "10")
			live.SetManagedFields(convoyOwns(both))
			c := &fakeCluster{
				records: map[string]map[string][]*release.Release{"shop": {"web": {record("web", 1, release.StatusDeployed)}}},
				objects: map[kube.Ref]*unstructured.Unstructured{cmRef: live},
			}
			p := savedWeb(t, nil)
			p.Releases[0].Observed.Objects = []plan.ObservedObject{observeApplied(cmRef, kube.AppliedOf("convoy", live))}
			if tc.change != nil {
				o := c.objects[cmRef]
				tc.change(o)
				o.SetResourceVersion("11")
			}
			checkStale(t, c.verify(t, p), tc.stale)
		})
	}
}

// Three or more observed objects of a kind in a namespace are verified
// with one page of metadata, not a GET each; what the page cannot answer
// (an incomplete page, a refused list, a hash of content) is read.
func TestVerifyByList(t *testing.T) {
	ref := func(name string) kube.Ref {
		return kube.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: name}
	}
	applied := func(name, rv, owned string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion("v1")
		o.SetKind("ConfigMap")
		o.SetNamespace("shop")
		o.SetName(name)
		o.SetUID(types.UID("uid-" + name))
		o.SetResourceVersion(rv)
		o.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "convoy", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(owned)}}})
		return o
	}
	const owns = `{"f:data":{"f:a":{},"f:b":{}}}`
	cluster := func() *fakeCluster {
		return &fakeCluster{
			records: map[string]map[string][]*release.Release{"shop": {}},
			objects: map[kube.Ref]*unstructured.Unstructured{ref("a"): applied("a", "10", owns), ref("b"): applied("b", "11", owns)},
		}
	}
	// The plan: a and b present (proven from metadata), c absent.
	observed := func(c *fakeCluster) *plan.Plan {
		rc := &plan.ReleaseChange{Name: "web", Namespace: "shop", Action: plan.ActionInstall}
		for _, n := range []string{"a", "b", "c"} {
			ob := observeAbsent(ref(n))
			if o := c.objects[ref(n)]; o != nil {
				ob = observeApplied(ref(n), kube.AppliedOf("convoy", o))
			}
			rc.Observed.Objects = append(rc.Observed.Objects, ob)
		}
		return &plan.Plan{Stack: "shop", Releases: []*plan.ReleaseChange{rc}}
	}
	for _, tc := range []struct {
		name              string
		change            func(c *fakeCluster)
		stale             string
		wantGets, wantLst int
	}{
		{name: "nothing moved", wantLst: 1},
		{name: "a status update", change: func(c *fakeCluster) { c.objects[ref("a")].SetResourceVersion("20") }, wantLst: 1},
		{name: "a field taken by another manager", change: func(c *fakeCluster) {
			c.objects[ref("b")] = applied("b", "21", `{"f:data":{"f:a":{}}}`)
		}, stale: "v1 ConfigMap shop/b was edited since the plan (resourceVersion 11, now 21)", wantLst: 1},
		{name: "recreated", change: func(c *fakeCluster) {
			o := applied("a", "22", owns)
			o.SetUID("uid-other")
			c.objects[ref("a")] = o
		}, stale: "v1 ConfigMap shop/a was edited since the plan", wantLst: 1},
		{name: "deleted", change: func(c *fakeCluster) { delete(c.objects, ref("a")) }, stale: "v1 ConfigMap shop/a was deleted since the plan", wantLst: 1},
		{name: "created", change: func(c *fakeCluster) { c.objects[ref("c")] = applied("c", "23", owns) }, stale: "v1 ConfigMap shop/c was created since the plan", wantLst: 1},
		{name: "an incomplete page", change: func(c *fakeCluster) { c.pageSize = 1 }, wantLst: 1, wantGets: 2},
		{name: "a refused list", change: func(c *fakeCluster) { c.listErr = errors.New("forbidden") }, wantLst: 1, wantGets: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster()
			p := observed(c)
			if tc.change != nil {
				tc.change(c)
			}
			checkStale(t, c.verify(t, p), tc.stale)
			if c.gets != tc.wantGets || c.lists != tc.wantLst {
				t.Errorf("%d gets and %d lists, want %d and %d", c.gets, c.lists, tc.wantGets, tc.wantLst)
			}
		})
	}
}
