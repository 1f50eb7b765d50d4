package plannertest

import (
	"context"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func configMap(data map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": data}}
	u.SetNamespace("shop")
	u.SetName("web")
	return u
}

// What the planner reads of convoy's apply (kube.AppliedOf) moves when
// someone else changes a field convoy set, and only then: as server-side
// apply's managed fields do.
func TestEditMovesOnlyTheChangedFieldsConvoySet(t *testing.T) {
	ctx := context.Background()
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	cm := configMap(map[string]any{"a": "1", "b": "2"})
	if _, err := v.Apply(ctx, cm); err != nil {
		t.Fatal(err)
	}
	ref := kube.RefOf(cm)
	before, err := v.Applied(ctx, ref)
	if err != nil || before == nil || before.UID == "" {
		t.Fatalf("applied %+v, %v", before, err)
	}
	if err := v.Edit(ctx, ref, func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"team": "x"}) }); err != nil {
		t.Fatal(err)
	}
	if same, _ := v.Applied(ctx, ref); same.Fields != before.Fields || same.UID != before.UID {
		t.Errorf("a field convoy does not set changed what it applied: %+v → %+v", before, same)
	}
	if err := v.Edit(ctx, ref, func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "9", "data", "a") }); err != nil {
		t.Fatal(err)
	}
	if moved, _ := v.Applied(ctx, ref); moved.Fields == before.Fields {
		t.Error("editing a field convoy set left what it applied as it was")
	}
}

func TestDryRunMergesOverLiveAndPersistsNothing(t *testing.T) {
	ctx := context.Background()
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := v.Apply(ctx, configMap(map[string]any{"a": "1", "b": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	after, err := v.DryRun(ctx, configMap(map[string]any{"a": "3"}), live, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(after.Object, "data")
	if data["a"] != "3" || data["b"] != "2" || after.GetUID() != live.GetUID() {
		t.Errorf("dry run %v (uid %s), want a=3 over the live b=2, the live uid", data, after.GetUID())
	}
	now, _ := v.Live(ctx, kube.RefOf(live))
	if got, _, _ := unstructured.NestedString(now.Object, "data", "a"); got != "1" {
		t.Errorf("live a=%s after a dry run, want 1", got)
	}
}

func deployment(selector string, replicas int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": selector}},
		},
	}}
	u.SetNamespace("shop")
	u.SetName("web")
	return u
}

// The managed fields say who set each field, in the API server's FieldsV1
// form (what kube.OwnersOf reads): convoy's apply for what it set, the
// manager of an edit for what the edit changed, and convoy's again once
// it applies the field anew.
func TestManagedFieldsNameWhoSetEachField(t *testing.T) {
	ctx := context.Background()
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Apply(ctx, deployment("web", 1)); err != nil {
		t.Fatal(err)
	}
	ref := kube.RefOf(deployment("web", 1))
	if err := v.EditAs(ctx, "kubectl", ref, func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(4), "spec", "replicas")
		_ = unstructured.SetNestedField(u.Object, "7", "metadata", "annotations", "deployment.kubernetes.io/revision")
	}); err != nil {
		t.Fatal(err)
	}
	owners := func(p ...string) string {
		live, err := v.Live(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, o := range kube.OwnersOf(live, kube.Pointer(p)) {
			s = append(s, o.Manager+"/"+string(o.Operation))
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		path []string
		want string
	}{
		{[]string{"spec", "replicas"}, "kubectl/Update"},
		{[]string{"spec", "selector", "matchLabels", "app"}, "helm/Apply"},
		{[]string{"metadata", "annotations", "deployment.kubernetes.io/revision"}, "kubectl/Update"},
	} {
		if got := owners(tc.path...); got != tc.want {
			t.Errorf("/%s owned by %q, want %q", strings.Join(tc.path, "/"), got, tc.want)
		}
	}
	if _, err := v.Apply(ctx, deployment("web", 1)); err != nil {
		t.Fatal(err)
	}
	if got := owners("spec", "replicas"); got != "helm/Apply" {
		t.Errorf("after convoy's apply, replicas owned by %q, want helm's apply alone", got)
	}
	if got := owners("metadata", "annotations", "deployment.kubernetes.io/revision"); got != "kubectl/Update" {
		t.Errorf("after convoy's apply, the annotation it does not set owned by %q, want kubectl's still", got)
	}
}

// A dry run refuses what the API server refuses: a change of an immutable
// field (as kube.IsImmutable recognises it, to plan a replacement) and an
// invalid name.
func TestDryRunRefusesImmutableFieldsAndInvalidNames(t *testing.T) {
	ctx := context.Background()
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	live, err := v.Apply(ctx, deployment("web", 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.DryRun(ctx, deployment("web", 3), live, nil); err != nil {
		t.Errorf("scaling refused: %v", err)
	}
	_, err = v.DryRun(ctx, deployment("front", 1), live, nil)
	if !kube.IsImmutable(err) || !strings.Contains(err.Error(), "apps/v1 Deployment shop/web: ") || !strings.Contains(err.Error(), "spec.selector") {
		t.Errorf("selector changed: %v, want the Deployment's selector refused as immutable", err)
	}

	bad := configMap(map[string]any{"a": "1"})
	bad.SetName("Bad_Name!!")
	for what, err := range map[string]error{
		"dry run":        func() error { _, err := v.DryRun(ctx, bad, nil, nil); return err }(),
		"dry-run create": v.DryRunCreate(ctx, bad, "elsewhere"),
	} {
		if !apierrors.IsInvalid(err) || kube.IsImmutable(err) || !strings.Contains(err.Error(), `metadata.name: Invalid value: "Bad_Name!!"`) {
			t.Errorf("%s of an invalid name: %v", what, err)
		}
	}
	if got, _ := v.Live(ctx, kube.RefOf(bad)); got != nil {
		t.Error("a dry run created the object")
	}

	immutableCM := configMap(map[string]any{"a": "1"})
	immutableCM.Object["immutable"] = true
	cm, err := v.Apply(ctx, immutableCM)
	if err != nil {
		t.Fatal(err)
	}
	changed := configMap(map[string]any{"a": "2"})
	changed.Object["immutable"] = true
	if _, err := v.DryRun(ctx, changed, cm, nil); !kube.IsImmutable(err) {
		t.Errorf("the data of an immutable ConfigMap changed: %v", err)
	}
}

// A field ignore_changes leaves to others is applied as kube's apply
// applies it: left out when another manager owns it, with its live value
// when convoy alone does (left out, server-side apply would delete it).
func TestDeployLeavesIgnoredFieldsAsApplyDoes(t *testing.T) {
	ctx := context.Background()
	replicas := kube.Pointer{"spec", "replicas"}
	for _, tc := range []struct {
		name    string
		scaleBy string // "": nobody scaled
		want    any    // the replicas applied; nil: left out
	}{
		{"scaled by another manager", "kubectl", nil},
		{"set by convoy alone", "", int64(2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := New(Options{})
			if err != nil {
				t.Fatal(err)
			}
			live, err := v.Apply(ctx, deployment("web", 2))
			if err != nil {
				t.Fatal(err)
			}
			if tc.scaleBy != "" {
				if err := v.EditAs(ctx, tc.scaleBy, kube.RefOf(live), func(u *unstructured.Unstructured) {
					_ = unstructured.SetNestedField(u.Object, int64(4), "spec", "replicas")
				}); err != nil {
					t.Fatal(err)
				}
				if live, err = v.Live(ctx, kube.RefOf(live)); err != nil {
					t.Fatal(err)
				}
			}
			out := v.leave(deployment("web", 9), live, []kube.Pointer{replicas})
			got, set := lookup(out.Object, replicas)
			if tc.want == nil && set || tc.want != nil && got != tc.want {
				t.Errorf("replicas applied: %v (set %v), want %v", got, set, tc.want)
			}
			if sel, _ := lookup(out.Object, kube.Pointer{"spec", "selector", "matchLabels", "app"}); sel != "web" {
				t.Errorf("selector %v: what is not ignored is applied as rendered", sel)
			}
		})
	}
}
