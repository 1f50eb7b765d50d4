package stack

import (
	"context"
	"testing"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// oneStack is a reader of a single Stack that counts its reads.
type oneStack struct {
	st    v1alpha1.Stack
	reads int
}

func (o *oneStack) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	o.reads++
	*obj.(*v1alpha1.Stack) = *o.st.DeepCopy()
	return nil
}

func (o *oneStack) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

func stackAt(rv string, failures int32) v1alpha1.Stack {
	return v1alpha1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "shop", ResourceVersion: rv}, Status: v1alpha1.StackStatus{Failures: failures}}
}

// A reconcile queued while the last one ran must not decide on the
// informer's copy from before that reconcile's status write (it would
// apply a failed plan again): the Stack is then read from the API server.
func TestStackVersionsReadPastALaggingCache(t *testing.T) {
	ctx, key := context.Background(), client.ObjectKey{Namespace: "ns", Name: "shop"}
	cached, api := &oneStack{st: stackAt("10", 0)}, &oneStack{st: stackAt("12", 1)}
	var v stackVersions
	var st v1alpha1.Stack

	// Nothing written yet: the cache is trusted.
	if err := v.get(ctx, cached, api, key, &st); err != nil || st.ResourceVersion != "10" || api.reads != 0 {
		t.Fatalf("first read: rv %q, %d API reads, %v", st.ResourceVersion, api.reads, err)
	}
	// The status write returned 12; the cache still holds 10.
	v.wrote(key, "12")
	if err := v.get(ctx, cached, api, key, &st); err != nil || st.ResourceVersion != "12" || st.Status.Failures != 1 || api.reads != 1 {
		t.Fatalf("lagging cache: rv %q, failures %d, %d API reads, %v", st.ResourceVersion, st.Status.Failures, api.reads, err)
	}
	// The cache caught up: no more API reads.
	cached.st = stackAt("12", 1)
	if err := v.get(ctx, cached, api, key, &st); err != nil || st.ResourceVersion != "12" || api.reads != 1 {
		t.Fatalf("caught up: rv %q, %d API reads, %v", st.ResourceVersion, api.reads, err)
	}
	// A failed write forgets the version: the cache is trusted again.
	cached.st = stackAt("11", 0)
	v.wrote(key, "")
	if err := v.get(ctx, cached, api, key, &st); err != nil || st.ResourceVersion != "11" || api.reads != 1 {
		t.Fatalf("forgotten: rv %q, %d API reads, %v", st.ResourceVersion, api.reads, err)
	}
}
