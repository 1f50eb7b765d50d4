package memview

import (
	"context"
	"testing"

	"github.com/convoy-sh/convoy/internal/kube"
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
