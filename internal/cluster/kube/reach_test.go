package kube_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// cutProxy forwards TCP from 127.0.0.1 to the API server until cut, then
// refuses.
func cutProxy(t *testing.T, target string) (addr string, cut func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	cut = func() {
		mu.Lock()
		defer mu.Unlock()
		_ = ln.Close()
		for _, c := range conns {
			_ = c.Close()
		}
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, up)
			mu.Unlock()
			go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
			go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
		}
	}()
	t.Cleanup(cut)
	return ln.Addr().String(), cut
}

// A wait for a deletion (a finalizer holds the object) on an API server
// that goes away ends after the client's unreachable bound, not its
// timeout, naming the object it stopped waiting for.
func TestWaitForDeleteGivesUpOnAnUnreachableAPIServer(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	cfg := cluster.RESTConfig()
	addr, cut := cutProxy(t, strings.TrimPrefix(cfg.Host, "https://"))
	cfg.Host = "https://" + addr
	c, err := kube.New(cfg, kube.Options{Reach: kube.NewReach(cfg, 2*time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t, 90*time.Second)
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
	t.Cleanup(func() {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, _ = cluster.Client().CoreV1().ConfigMaps(ns).Patch(context.Background(), "held", types.MergePatchType, patch, metav1.PatchOptions{})
	})
	if _, err := c.Delete(ctx, refs(objs), kube.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cut()
	start := time.Now()
	err = c.WaitForDelete(ctx, refs(objs))
	var ue *kube.UnreachableError
	want := "API server https://" + addr + " unreachable since "
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), ": stopped waiting for v1 ConfigMap "+ns+"/held") {
		t.Fatalf("error = %v, want %q… stopped waiting for the ConfigMap", err, want)
	}
	if ctx.Err() != nil {
		t.Fatal("gave up only at the timeout")
	}
	t.Logf("gave up after %s (bound 2s, timeout 90s): %v", time.Since(start).Round(100*time.Millisecond), err)
}
