package kube_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// What a plan reads from lists of metadata (ListApplied, page by page)
// gives the applied state that full objects give, for objects the client
// applied, objects another manager then edited, and objects it never
// applied; an object recreated since changes it.
func TestListAppliedAgreesWithFullObjects(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := testContext(t, 30*time.Second)
	c, err := kube.New(cluster.RESTConfig(), kube.Options{ListPageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	var manifest string
	for i := range 5 {
		manifest += fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  color: blue\n", i)
	}
	if _, err := c.Apply(ctx, parse(t, c, ns, manifest), kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cluster.Client().CoreV1().ConfigMaps(ns)
	if _, err := cms.Patch(ctx, "cm-1", types.MergePatchType, []byte(`{"data":{"color":"red"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Patch(ctx, "cm-2", types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"a"}}}`), metav1.PatchOptions{FieldManager: "kubectl-label"}); err != nil {
		t.Fatal(err)
	}
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "not-applied"}, Data: map[string]string{"color": "green"}}
	if _, err := cms.Create(ctx, other, metav1.CreateOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}

	ref := func(name string) kube.Ref {
		return kube.Ref{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: name}
	}
	names := []string{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4", "not-applied", "absent"}
	state := func() (fromMeta, fromFull string) {
		t.Helper()
		got, err := c.ListApplied(ctx, "v1", "ConfigMap", ns, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names[:6] { // in pages of 2 (kube-root-ca.crt may be a seventh)
			if got[n] == nil {
				t.Fatalf("%s not listed: %v", n, got)
			}
		}
		refs := make([]kube.Ref, len(names))
		metas := make([]*kube.Applied, len(names))
		fulls := make([]*unstructured.Unstructured, len(names))
		for i, n := range names {
			refs[i], metas[i] = ref(n), got[n]
			if n == "absent" {
				continue
			}
			if fulls[i], err = c.Get(ctx, refs[i]); err != nil {
				t.Fatal(err)
			}
			if metas[i] == nil || metas[i].ResourceVersion != fulls[i].GetResourceVersion() {
				t.Fatalf("%s: listed %+v, live at resourceVersion %s", n, metas[i], fulls[i].GetResourceVersion())
			}
		}
		if got["not-applied"].Fields != "" || got["cm-0"].Fields == "" {
			t.Fatalf("fields of the client's apply entries: not-applied %q, cm-0 %q", got["not-applied"].Fields, got["cm-0"].Fields)
		}
		return kube.AppliedStateOf(refs, metas), c.AppliedState(refs, fulls)
	}
	before, full := state()
	if before != full {
		t.Fatalf("applied state from metadata %s, from full objects %s", before, full)
	}
	if err := cms.Delete(ctx, "cm-3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(ctx, parse(t, c, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-3\ndata:\n  color: blue\n"), kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	after, full := state()
	if after != full || after == before {
		t.Fatalf("after cm-3 was recreated: from metadata %s, from full objects %s, before %s", after, full, before)
	}
}

// A Service whose ports are 80 and 443, as traefik's and ingress-nginx's
// are: the applied state the apply's response gives (decoded into a map,
// its field set re-encoded with sorted keys, `k:{"port":443…}` first) is
// the one a plan reads from the metadata list (the server's order, 80
// first), so that their releases prove unchanged right after apply.
func TestAppliedStateOfAServiceWithPorts80And443(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := testContext(t, 30*time.Second)
	c, err := kube.New(cluster.RESTConfig(), kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	results, err := c.Apply(ctx, parse(t, c, ns, `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
    - name: web
      port: 80
      targetPort: 8000
    - name: websecure
      port: 443
      targetPort: 8443
`), kube.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := kube.Ref{Version: "v1", Kind: "Service", Namespace: ns, Name: "web"}
	listed, err := c.ListApplied(ctx, "v1", "Service", ns, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if listed["web"] == nil {
		t.Fatalf("web not listed: %v", listed)
	}
	applied := c.AppliedState([]kube.Ref{ref}, []*unstructured.Unstructured{results[0].Live})
	if read := kube.AppliedStateOf([]kube.Ref{ref}, []*kube.Applied{listed["web"]}); applied != read {
		t.Fatalf("the state apply records (%s) is not the one the metadata list reads (%s): fields\n%s\nlisted\n%s",
			applied, read, kube.AppliedOf(c.FieldManager(), results[0].Live).Fields, listed["web"].Fields)
	}
}

// The applied state is kept in release records' labels: its encoding must
// not change between versions, or every release reads as changed once.
// It is the SHA-256 of the objects sorted by identity, each as
// "group/Kind/namespace/name", its UID ("absent" when it is), and its
// field set, separated by 0 and ended by 1; 40 hex digits of it.
func TestAppliedStateEncoding(t *testing.T) {
	refs := []kube.Ref{
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "ns", Name: "web"},
		{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "gone"},
	}
	objs := []*kube.Applied{{UID: "u-1", Fields: `{"f:spec":{"f:replicas":{}}}`}, nil}
	sum := sha256.Sum256([]byte("/ConfigMap/ns/gone\x00absent\x00\x01" + "apps/Deployment/ns/web\x00u-1\x00" + `{"f:spec":{"f:replicas":{}}}` + "\x01"))
	if got, want := kube.AppliedStateOf(refs, objs), hex.EncodeToString(sum[:])[:40]; got != want {
		t.Fatalf("applied state %s, want %s", got, want)
	}
}
