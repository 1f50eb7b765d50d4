package kube_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

func testContext(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

func configMap(data string) string {
	return `
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  ` + data + "\n"
}

func TestApplyActions(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := testContext(t, 30*time.Second)
	c := newClient(t)

	steps := []struct {
		name     string
		manifest string
		want     []kube.Action
	}{
		{"create", configMap("color: blue") + "---" + deployment("web", 1), []kube.Action{kube.ActionCreated, kube.ActionCreated}},
		{"reapply", configMap("color: blue") + "---" + deployment("web", 1), []kube.Action{kube.ActionUnchanged, kube.ActionUnchanged}},
		{"change one", configMap("color: red") + "---" + deployment("web", 1), []kube.Action{kube.ActionConfigured, kube.ActionUnchanged}},
	}
	for _, step := range steps {
		results, err := c.Apply(ctx, parse(t, c, ns, step.manifest), kube.ApplyOptions{})
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if len(results) != len(step.want) {
			t.Fatalf("%s: %d results, want %d", step.name, len(results), len(step.want))
		}
		for i, r := range results {
			if r.Action != step.want[i] {
				t.Errorf("%s: %s: action %s, want %s", step.name, r.Ref, r.Action, step.want[i])
			}
			if r.Live == nil || r.Live.GetUID() == "" {
				t.Errorf("%s: %s: no live object", step.name, r.Ref)
			}
		}
	}

	live, err := c.Get(ctx, kube.Ref{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "settings"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(live.Object, "data", "color"); got != "red" {
		t.Errorf("color = %q, want red", got)
	}
	managers := []string{}
	for _, mf := range live.GetManagedFields() {
		managers = append(managers, mf.Manager+"/"+string(mf.Operation))
	}
	if strings.Join(managers, ",") != "helm/Apply" {
		t.Errorf("managed fields = %v, want helm/Apply only", managers)
	}
}

func TestApplyConflict(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := testContext(t, 30*time.Second)
	mine := newClient(t)
	theirs, err := kube.New(cluster.RESTConfig(), kube.Options{FieldManager: "someone-else"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := theirs.Apply(ctx, parse(t, theirs, ns, configMap("color: blue")), kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}

	_, err = mine.Apply(ctx, parse(t, mine, ns, configMap("color: red")), kube.ApplyOptions{})
	want := "v1 ConfigMap " + ns + "/settings: "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !apierrors.IsConflict(err) {
		t.Fatalf("error = %v, want a conflict starting with %q", err, want)
	}
	if !strings.Contains(err.Error(), `conflict with "someone-else"`) {
		t.Errorf("error does not name the other manager: %v", err)
	}
	var oe *kube.ObjectError
	if !errors.As(err, &oe) || oe.Ref.Name != "settings" {
		t.Errorf("error is not an *ObjectError for the ConfigMap: %#v", err)
	}

	results, err := mine.Apply(ctx, parse(t, mine, ns, configMap("color: red")), kube.ApplyOptions{Force: true})
	if err != nil {
		t.Fatalf("forced apply: %v", err)
	}
	if results[0].Action != kube.ActionConfigured {
		t.Errorf("forced apply action = %s, want configured", results[0].Action)
	}
	if got, _, _ := unstructured.NestedString(results[0].Live.Object, "data", "color"); got != "red" {
		t.Errorf("color after forced apply = %q, want red", got)
	}
}

func TestApplyDryRun(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := testContext(t, 30*time.Second)
	c := newClient(t)
	dry := kube.ApplyOptions{DryRun: kube.DryRunServer}
	ref := kube.Ref{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "settings"}

	results, err := c.Apply(ctx, parse(t, c, ns, configMap("color: blue")), dry)
	if err != nil {
		t.Fatal(err)
	}
	if results[0].Action != kube.ActionCreated {
		t.Errorf("dry-run create action = %s", results[0].Action)
	}
	if got, _, _ := unstructured.NestedString(results[0].Live.Object, "data", "color"); got != "blue" {
		t.Errorf("dry-run result color = %q, want blue", got)
	}
	if _, err := c.Get(ctx, ref); !apierrors.IsNotFound(err) {
		t.Fatalf("after dry-run create, Get error = %v, want NotFound", err)
	}

	if _, err := c.Apply(ctx, parse(t, c, ns, configMap("color: blue")), kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		data string
		want kube.Action
	}{{"color: blue", kube.ActionUnchanged}, {"color: green", kube.ActionConfigured}} {
		results, err = c.Apply(ctx, parse(t, c, ns, configMap(tt.data)), dry)
		if err != nil {
			t.Fatal(err)
		}
		if results[0].Action != tt.want {
			t.Errorf("dry-run %q: action %s, want %s", tt.data, results[0].Action, tt.want)
		}
	}
	live, err := c.Get(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(live.Object, "data", "color"); got != "blue" {
		t.Errorf("dry-run changed the stored object: color = %q", got)
	}
}

func TestApplyInvalid(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := testContext(t, 30*time.Second)
	c := newClient(t)
	tests := []struct {
		name     string
		manifest string
		ref      string
		want     string
	}{
		{
			name:     "wrong field type",
			manifest: strings.Replace(deployment("web", 1), "replicas: 1", `replicas: "two"`, 1),
			ref:      "apps/v1 Deployment " + ns + "/web: ",
			want:     ".spec.replicas",
		},
		{
			name:     "fails validation",
			manifest: strings.Replace(deployment("web", 1), "replicas: 1", `replicas: -1`, 1),
			ref:      "apps/v1 Deployment " + ns + "/web: ",
			want:     "spec.replicas: Invalid value: -1",
		},
		{
			name:     "unknown field",
			manifest: configMap("a: b") + "color: blue\n",
			ref:      "v1 ConfigMap " + ns + "/settings: ",
			want:     "color",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := parse(t, c, ns, configMap("first: ok")+"---"+tt.manifest)
			objs[0].SetName("first")
			results, err := c.Apply(ctx, objs, kube.ApplyOptions{})
			if err == nil || !strings.HasPrefix(err.Error(), tt.ref) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %q…%q", err, tt.ref, tt.want)
			}
			t.Log(err)
			if len(results) != 1 || results[0].Ref.Name != "first" {
				t.Errorf("results before the failure = %v, want the first ConfigMap", results)
			}
		})
	}
}

func TestApplyNamespacedWithoutNamespace(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	c := newClient(t)
	objs := parse(t, c, "", configMap("a: b"))
	_, err := c.Apply(ctx, objs, kube.ApplyOptions{})
	if err == nil || err.Error() != "v1 ConfigMap settings: namespaced ConfigMap has no namespace" {
		t.Fatalf("error = %v", err)
	}
}

func TestEnsureNamespace(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	c := newClient(t)
	name := "t-ensure-" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000"), ".", ""))
	t.Cleanup(func() {
		_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	for range 2 { // the second call finds it and leaves it alone
		if err := c.EnsureNamespace(ctx, name, map[string]string{"name": name}); err != nil {
			t.Fatal(err)
		}
	}
	ns, err := cluster.Client().CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels["name"] != name {
		t.Errorf("labels = %v", ns.Labels)
	}

	// A namespace held in Terminating by a finalized object cannot be used.
	held := parse(t, c, name, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held, finalizers: [convoy.dev/test-hold]}\n")
	if _, err := c.Apply(ctx, held, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, _ = cluster.Client().CoreV1().ConfigMaps(name).Patch(context.Background(), "held", types.MergePatchType, patch, metav1.PatchOptions{})
	})
	if err := cluster.Client().CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A client checks a namespace once: a run's next client (a new run)
	// sees it terminating.
	err = newClient(t).EnsureNamespace(ctx, name, nil)
	if want := "v1 Namespace " + name + ": namespace is terminating"; err == nil || err.Error() != want {
		t.Fatalf("EnsureNamespace on a terminating namespace: %v, want %q", err, want)
	}
}

// TestEnsureNamespaceConcurrently: releases of one new namespace ensure it
// at once; one reads and creates it, the others find it created (before:
// a read and a refused create each).
func TestEnsureNamespaceConcurrently(t *testing.T) {
	cluster.Need(t)
	ctx := testContext(t, 30*time.Second)
	name := "t-ensure-many-" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000"), ".", ""))
	t.Cleanup(func() {
		_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	cfg := rest.CopyConfig(cluster.RESTConfig())
	var traffic kube.Traffic
	traffic.Wrap(cfg)
	c, err := kube.New(cfg, kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() { errs <- c.EnsureNamespace(ctx, name, nil) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cluster.Client().CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := traffic.ByKind(); got != "create namespaces=1 get namespaces=1" {
		t.Errorf("requests: %s, want one read and one create", got)
	}
}

// A client checks each namespace once (releases sharing one do not ask
// again), but one deleted since is created again by the next
// EnsureNamespace once an apply was refused for its absence.
func TestEnsureNamespaceAfterDeletion(t *testing.T) {
	ctx := testContext(t, 2*time.Minute)
	c := newClient(t)
	name := "t-ensure-again-" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000"), ".", ""))
	t.Cleanup(func() {
		_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	if err := c.EnsureNamespace(ctx, name, nil); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for { // poll until the namespace controller removed it
		_, err := cluster.Client().CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("namespace %s still there: %v", name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cm := parse(t, c, name, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n")
	if _, err := c.Apply(ctx, cm, kube.ApplyOptions{}); err == nil {
		t.Fatal("apply into a deleted namespace succeeded")
	}
	if err := c.EnsureNamespace(ctx, name, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(ctx, cm, kube.ApplyOptions{}); err != nil {
		t.Fatalf("apply after EnsureNamespace created the namespace again: %v", err)
	}
}

// A new namespace the releases of a run create: every release checks it
// (plan, validation), one validation and one read in all; EnsureNamespace
// then creates it without reading it again. An existing one is read once
// and never created.
func TestCheckNamespaceOnce(t *testing.T) {
	cluster.Need(t)
	ctx := testContext(t, 30*time.Second)
	existing := cluster.Namespace(t)
	fresh := "t-check-" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000"), ".", ""))
	t.Cleanup(func() {
		_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), fresh, metav1.DeleteOptions{})
	})
	for _, tc := range []struct {
		name, want string
		exists     bool
	}{
		{fresh, "create namespaces=2 get namespaces=1", false},
		{existing, "get namespaces=1", true},
	} {
		c, traffic := countedClient(t)
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				exists, err := c.CheckNamespace(ctx, tc.name)
				if err != nil || exists != tc.exists {
					t.Errorf("CheckNamespace(%s) = %v, %v; want %v", tc.name, exists, err, tc.exists)
				}
			})
		}
		wg.Wait()
		for range 2 {
			if err := c.EnsureNamespace(ctx, tc.name, nil); err != nil {
				t.Fatal(err)
			}
		}
		if got := strings.TrimSpace(regexp.MustCompile(` ?get discovery=\d+`).ReplaceAllString(traffic.ByKind(), "")); got != tc.want {
			t.Errorf("%s: requests %s, want %s", tc.name, got, tc.want)
		}
	}
	if _, err := cluster.Client().CoreV1().Namespaces().Get(ctx, fresh, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A namespace found absent but created by someone else before
// EnsureNamespace: its create is refused as existing, which is the outcome
// asked for, unless it is being deleted (read then).
func TestEnsureNamespaceCreatedMeanwhile(t *testing.T) {
	cluster.Need(t)
	ctx := testContext(t, 30*time.Second)
	name := "t-meanwhile-" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000"), ".", ""))
	t.Cleanup(func() {
		_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	c := newClient(t)
	if exists, err := c.CheckNamespace(ctx, name); err != nil || exists {
		t.Fatalf("CheckNamespace = %v, %v", exists, err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"by": "someone"}}}
	if _, err := cluster.Client().CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.EnsureNamespace(ctx, name, map[string]string{"by": "convoy"}); err != nil {
		t.Fatal(err)
	}
	got, err := cluster.Client().CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil || got.Labels["by"] != "someone" {
		t.Fatalf("the namespace someone created: %v, %v", got.Labels, err)
	}
}

// The apply's validation of what the plan's dry run accepted a moment
// before, by the same client: not sent again. A changed object, and one
// the API server refused, are.
func TestValidationNotRepeated(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := testContext(t, 30*time.Second)
	c, traffic := countedClient(t)
	objs := parse(t, c, ns, configMap("a: b"))
	// The plan's dry run of an object it listed absent.
	if _, err := c.Apply(ctx, objs, kube.ApplyOptions{DryRun: kube.DryRunServer, Force: true, LiveKnown: true}); err != nil {
		t.Fatal(err)
	}
	validate := func(objs []*unstructured.Unstructured) error {
		_, err := c.Apply(ctx, objs, kube.ApplyOptions{DryRun: kube.DryRunServer, Force: true, Unread: true})
		return err
	}
	patches := func() int { return kindCounts(traffic)["patch configmaps"] }
	if err := validate(objs); err != nil {
		t.Fatal(err)
	}
	if got := patches(); got != 1 {
		t.Errorf("patch configmaps=%d after the plan's dry run and the validation of the same object, want 1", got)
	}
	if err := validate(parse(t, c, ns, configMap("a: changed"))); err != nil {
		t.Fatal(err)
	}
	if got := patches(); got != 2 {
		t.Errorf("patch configmaps=%d after validating a changed object, want 2", got)
	}
	bad := parse(t, c, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_A_Name}\n")
	for i := range 2 {
		if err := validate(bad); err == nil {
			t.Fatalf("validation %d of an invalid name succeeded", i+1)
		}
	}
	if got := patches(); got != 4 {
		t.Errorf("patch configmaps=%d after validating a refused object twice, want 4: a refusal is asked again", got)
	}
	// Dry-run creates likewise (objects of a namespace not created yet).
	for range 2 {
		if err := c.DryRunCreateIn(ctx, objs[0], kube.ValidationNamespace); err != nil {
			t.Fatal(err)
		}
	}
	if got := kindCounts(traffic)["create configmaps"]; got != 1 {
		t.Errorf("create configmaps=%d after two identical dry-run creates, want 1", got)
	}
	// Writing an inert kind (a ConfigMap) forgets nothing; a quota, which
	// the API server's admission reads, forgets every validation.
	if _, err := c.Apply(ctx, parse(t, c, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n"), kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := validate(objs); err != nil {
		t.Fatal(err)
	}
	if got := patches(); got != 5 { // 4 + the write of "other"
		t.Errorf("patch configmaps=%d after a ConfigMap's write and the validation again, want 5", got)
	}
	quota := parse(t, c, ns, "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {configmaps: \"100\"}}\n")
	if _, err := c.Apply(ctx, quota, kube.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := validate(objs); err != nil {
		t.Fatal(err)
	}
	if got := patches(); got != 6 {
		t.Errorf("patch configmaps=%d after a quota's write and the validation again, want 6: validated again", got)
	}
}
