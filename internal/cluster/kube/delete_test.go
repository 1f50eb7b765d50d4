package kube_test

import (
	"context"
	"errors"
	"net/http"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

func TestDelete(t *testing.T) {
	tests := []struct {
		name        string
		propagation kube.Propagation
		// replicaSets the moment Delete returns: -1 when it depends on the
		// garbage collector's timing.
		replicaSets int
	}{
		{"foreground", kube.PropagationForeground, 0},
		{"background", kube.PropagationBackground, -1},
		{"orphan", kube.PropagationOrphan, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			ctx := testContext(t, 60*time.Second)
			c := newClient(t)
			objs := parse(t, c, ns, deployment("web", 2)+"---"+configMap("a: b"))
			if _, err := c.Apply(ctx, objs, kube.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := c.Wait(ctx, refs(objs), kube.WaitOptions{}); err != nil {
				t.Fatal(err)
			}
			missing := kube.Ref{Version: "v1", Kind: "Secret", Namespace: ns, Name: "never-existed"}

			deleted, err := c.Delete(ctx, append(refs(objs), missing), kube.DeleteOptions{Propagation: tt.propagation, Wait: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(deleted) != 2 || deleted[0] != refs(objs)[0] || deleted[1] != refs(objs)[1] {
				t.Errorf("deleted = %v, want the Deployment and the ConfigMap (not the missing Secret)", deleted)
			}
			for _, ref := range refs(objs) {
				if _, err := c.Get(ctx, ref); !apierrors.IsNotFound(err) {
					t.Errorf("%s after Delete with Wait: %v, want NotFound", ref, err)
				}
			}
			if tt.replicaSets >= 0 {
				rs, err := cluster.Client().AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(rs.Items) != tt.replicaSets {
					t.Errorf("%s delete returned with %d ReplicaSets left, want %d", tt.name, len(rs.Items), tt.replicaSets)
				}
			}
		})
	}
}

func TestWaitForDeleteFinalizer(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	ctx := testContext(t, 30*time.Second)
	c := newClient(t)
	objs := parse(t, c, ns, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: held
  finalizers: [convoy.dev/test-hold]
`)
	if _, err := c.Apply(ctx, objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	release := func() {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, _ = cluster.Client().CoreV1().ConfigMaps(ns).Patch(context.Background(), "held", types.MergePatchType, patch, metav1.PatchOptions{})
	}
	t.Cleanup(release)

	_, err := c.Delete(testContext(t, 2*time.Second), refs(objs), kube.DeleteOptions{Wait: true})
	var nre *kube.NotReadyError
	if !errors.As(err, &nre) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want a *NotReadyError timeout", err)
	}
	want := "v1 ConfigMap " + ns + "/held: still exists: deletion pending, finalizers: convoy.dev/test-hold"
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}

	// Once the finalizer goes, a waiter sees the object go too: the
	// finalizer is removed once the waiter watches.
	watching := make(chan struct{})
	waiter := newWatchingClient(t, "configmaps", watching)
	done := make(chan error, 1)
	go func() { done <- waiter.WaitForDelete(ctx, refs(objs)) }()
	select {
	case <-watching:
	case <-ctx.Done():
		t.Fatal("WaitForDelete never watched the ConfigMap")
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("WaitForDelete after the finalizer was removed: %v", err)
	}
}

func TestDeleteErrorsNameObjects(t *testing.T) {
	ns := cluster.Namespace(t)
	c := newClient(t)
	gone := kube.Ref{Group: "example.invalid", Version: "v1", Kind: "Nothing", Namespace: ns, Name: "x"}
	bad := kube.Ref{Version: "v1", Kind: "Secret", Name: "no-namespace"}
	cm := parse(t, c, ns, configMap("a: b"))
	ctx := testContext(t, 30*time.Second)
	if _, err := c.Apply(ctx, cm, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted, err := c.Delete(ctx, []kube.Ref{gone, bad, kube.RefOf(cm[0])}, kube.DeleteOptions{})
	if err == nil || err.Error() != "v1 Secret no-namespace: namespaced Secret has no namespace" {
		t.Fatalf("error = %v", err)
	}
	if len(deleted) != 1 || deleted[0] != kube.RefOf(cm[0]) {
		t.Errorf("deleted = %v: Delete should go on past a failure", deleted)
	}
}

// newWatchingClient is a client that closes watching once its first watch
// of resource (a plural, "configmaps") is established.
func newWatchingClient(t *testing.T, resource string, watching chan<- struct{}) *kube.Client {
	t.Helper()
	cluster.Need(t)
	cfg := rest.CopyConfig(cluster.RESTConfig())
	var once sync.Once
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && r.URL.Query().Get("watch") == "true" && path.Base(r.URL.Path) == resource {
				once.Do(func() { close(watching) })
			}
			return resp, err
		})
	})
	c, err := kube.New(cfg, kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
