package stackset

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// apiReads records the reads that go to the API server, uncached.
type apiReads struct {
	client.Reader
	mu    sync.Mutex
	reads []string
}

func (a *apiReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	a.note(fmt.Sprintf("get %T %s", obj, key))
	return a.Reader.Get(ctx, key, obj, opts...)
}

func (a *apiReads) List(ctx context.Context, l client.ObjectList, opts ...client.ListOption) error {
	a.note(fmt.Sprintf("list %T", l))
	return a.Reader.List(ctx, l, opts...)
}

func (a *apiReads) note(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reads = append(a.reads, s)
}

func (a *apiReads) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.reads
	a.reads = nil
	return out
}

// A StackSet's reconcile reads the informers (the StackSets, Stacks,
// Pipelines and Secrets' metadata), not the API server: of 50
// registrations (of another namespace, whose kubeconfigs it copies) it
// reads each kubeconfig once, when it copies it; a reconcile with
// nothing new reads nothing uncached, and a registration changed is read
// again, alone.
func TestReconcileReadsTheInformersNotTheAPIServer(t *testing.T) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	var objs []client.Object
	for i := range 50 {
		objs = append(objs, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "hub", Name: fmt.Sprintf("c%02d", i), Labels: map[string]string{
				v1alpha1.RegistrationLabel: v1alpha1.RegistrationValue, "ring": fmt.Sprint(i % 4),
			}},
			Data: map[string][]byte{v1alpha1.KubeconfigKey: []byte("kubeconfig " + fmt.Sprint(i))},
		})
	}
	objs = append(objs, &v1alpha1.StackSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "web", UID: "uid-web", Generation: 1},
		Spec: v1alpha1.StackSetSpec{
			Generators: []v1alpha1.Generator{{Clusters: &v1alpha1.ClustersGenerator{Namespace: "hub"}}},
			Template:   v1alpha1.StackTemplate{Spec: v1alpha1.StackSpec{Source: "oci://registry.example/stacks/web:live"}},
			Strategy: &v1alpha1.StackSetStrategy{Rolling: &v1alpha1.RollingStrategy{Steps: []v1alpha1.RolloutStep{
				{Name: "canary", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ring": "0"}}},
				{Name: "rest"},
			}}},
		},
	})
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(&v1alpha1.StackSet{}, &v1alpha1.Stack{}, &v1alpha1.Pipeline{}).Build()
	api := &apiReads{Reader: c}
	r := New(Deps{Client: c, Cache: c, Reader: api, Scheme: s, Options: Options{Timeout: time.Minute}})
	ctx := context.Background()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "fleet", Name: "web"}}

	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	var stacks v1alpha1.StackList
	if err := c.List(ctx, &stacks, client.InNamespace("fleet")); err != nil || len(stacks.Items) != 50 {
		t.Fatalf("%d Stacks generated (%v)", len(stacks.Items), err)
	}
	var p v1alpha1.Pipeline
	if err := c.Get(ctx, req.NamespacedName, &p); err != nil || len(p.Spec.Stages) != 2 {
		t.Fatalf("the rollout's Pipeline: %+v (%v)", p.Spec.Stages, err)
	}
	first := api.take()
	if len(first) != 50 {
		t.Fatalf("the first reconcile read %d objects uncached, want the 50 kubeconfigs it copies: %v", len(first), first)
	}
	for _, rd := range first {
		if rd[:len("get *v1.Secret")] != "get *v1.Secret" {
			t.Fatalf("an uncached read other than a kubeconfig: %s", rd)
		}
	}
	for range 3 {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if again := api.take(); len(again) != 0 {
		t.Fatalf("reconciles with nothing new read %d objects uncached: %v", len(again), again)
	}

	// A registration's kubeconfig changed: that one is read and copied again.
	var reg corev1.Secret
	if err := c.Get(ctx, types.NamespacedName{Namespace: "hub", Name: "c07"}, &reg); err != nil {
		t.Fatal(err)
	}
	reg.Data[v1alpha1.KubeconfigKey] = []byte("rotated")
	if err := c.Update(ctx, &reg); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if reads := api.take(); len(reads) != 1 || reads[0] != "get *v1.Secret hub/c07" {
		t.Fatalf("after a registration changed, the reconcile read %v", reads)
	}
	var cp corev1.Secret
	if err := c.Get(ctx, types.NamespacedName{Namespace: "fleet", Name: mirrorName("web", &Registration{Namespace: "hub", Name: "c07"})}, &cp); err != nil {
		t.Fatal(err)
	}
	if string(cp.Data[v1alpha1.KubeconfigKey]) != "rotated" {
		t.Fatalf("the copy of hub/c07 holds %q", cp.Data[v1alpha1.KubeconfigKey])
	}
}
