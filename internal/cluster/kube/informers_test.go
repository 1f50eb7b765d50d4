package kube_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	rbacv1 "k8s.io/api/rbac/v1"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// names lists the names ListMetadata serves (nil when it does not).
func names(t *testing.T, in *kube.Informers, namespace, selector string) []string {
	t.Helper()
	items, ok := in.ListMetadata(context.Background(), configMaps, namespace, metav1.ListOptions{LabelSelector: selector})
	if !ok {
		return nil
	}
	out := []string{}
	for _, o := range items {
		out = append(out, o.Name)
	}
	slices.Sort(out)
	return out
}

// waitNames polls ListMetadata until it serves want.
func waitNames(t *testing.T, in *kube.Informers, namespace, selector string, want ...string) {
	t.Helper()
	var got []string
	devtest.Eventually(t, 30*time.Second, func() bool {
		got = names(t, in, namespace, selector)
		return slices.Equal(got, want)
	}, func() string {
		return fmt.Sprintf("ListMetadata(%s, %q) = %v, want %v", namespace, selector, got, want)
	})
}

func labelledConfigMap(name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// Shared informers serve a namespace's objects' metadata without a
// request once synced, select by label, follow creations and deletions,
// and keep of each object what plans read: ListAppliedFrom agrees with
// ListApplied's direct list.
func TestInformersServeAndFollow(t *testing.T) {
	c := newClient(t)
	ns := cluster.Namespace(t)
	ctx := context.Background()
	cms := cluster.Client().CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(ctx, labelledConfigMap("a", map[string]string{"team": "x"}), metav1.CreateOptions{FieldManager: "other"}); err != nil {
		t.Fatal(err)
	}
	objs := parse(t, c, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  labels: {team: x}\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '{\"big\": true}'\ndata: {k: v}\n")
	if _, err := c.Apply(ctx, objs, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// Another manager's write beside convoy's on b.
	if _, err := cms.Patch(ctx, "b", types.MergePatchType, []byte(`{"data":{"other":"1"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}

	cfg := rest.CopyConfig(cluster.RESTConfig())
	var traffic kube.Traffic
	traffic.Wrap(cfg)
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in := kube.NewInformers(md, c.FieldManager())
	t.Cleanup(in.Close)

	waitNames(t, in, ns, "team=x", "a", "b")
	requests := traffic.Requests.Load()
	if got := names(t, in, ns, ""); !slices.Equal(got, []string{"a", "b", "kube-root-ca.crt"}) && !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("every ConfigMap of the namespace: %v", got)
	}
	if got := names(t, in, ns, "team=y"); len(got) != 0 {
		t.Errorf("team=y: %v, want none", got)
	}
	cached, ok, err := c.ListAppliedFrom(ctx, in, "v1", "ConfigMap", ns, metav1.ListOptions{})
	if err != nil || !ok {
		t.Fatalf("ListAppliedFrom: ok %v, %v", ok, err)
	}
	if n := traffic.Requests.Load() - requests; n != 0 {
		t.Errorf("lists served from synced informers made %d requests", n)
	}
	direct, err := c.ListApplied(ctx, "v1", "ConfigMap", ns, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if *cached[name] != *direct[name] {
			t.Errorf("%s: cached %+v, listed %+v", name, *cached[name], *direct[name])
		}
	}
	if cached["b"].Fields == "" {
		t.Error("b: convoy's applied fields are missing from the cache")
	}
	items, _ := in.ListMetadata(ctx, configMaps, ns, metav1.ListOptions{LabelSelector: "team=x"})
	for _, o := range items {
		if _, ok := o.Annotations["kubectl.kubernetes.io/last-applied-configuration"]; ok {
			t.Errorf("%s: kubectl's last-applied configuration is kept", o.Name)
		}
		for _, mf := range o.ManagedFields {
			if mf.Manager != c.FieldManager() {
				t.Errorf("%s: the managedFields entry of %s is kept", o.Name, mf.Manager)
			}
		}
	}

	if _, err := cms.Create(ctx, labelledConfigMap("c", map[string]string{"team": "x"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNames(t, in, ns, "team=x", "b", "c")
}

// Credentials that may not list a resource cluster-wide get it watched in
// the namespaces asked for; what they may not read at all is not served
// (the caller lists, and gets the API server's error).
func TestInformersFallBackToNamespaces(t *testing.T) {
	c := newClient(t)
	ns := cluster.Namespace(t)
	ctx := context.Background()
	user := "informers-" + ns
	rbacs := cluster.Client().RbacV1()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}}
	if _, err := rbacs.Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "read-configmaps"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read-configmaps"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: user}},
	}
	if _, err := rbacs.RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Create(ctx, labelledConfigMap("a", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cfg := rest.CopyConfig(cluster.RESTConfig())
	cfg.Impersonate.UserName = user
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in := kube.NewInformers(md, c.FieldManager())
	t.Cleanup(in.Close)

	waitNames(t, in, ns, "", "a", "kube-root-ca.crt")
	if _, ok := in.ListMetadata(ctx, configMaps, "", metav1.ListOptions{}); ok {
		t.Error("ConfigMaps of every namespace served to credentials that may not list them")
	}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if _, ok := in.ListMetadata(ctx, secrets, ns, metav1.ListOptions{}); ok {
		t.Error("Secrets served to credentials that may not list them")
	}
}
