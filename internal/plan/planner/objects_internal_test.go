package planner

import (
	"reflect"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestMaskObjectMasksValuesSecretDataAndDerivedFields(t *testing.T) {
	obj := map[string]any{
		"kind": "Secret",
		"data": map[string]any{"password": "aGVsbG8=", "user": "YWRt"},
		"spec": map[string]any{"containers": []any{
			map[string]any{"name": "web", "env": []any{map[string]any{"name": "TOKEN", "value": "tok-abcdefgh"}}, "image": "web:1"},
			map[string]any{"name": "side", "args": []any{"--hash=derived-xyz"}},
		}},
	}
	got := maskObject(obj, sensitive.New([]string{"tok-abcdefgh"}), []string{"data", "spec.containers[name=side].args"})
	want := map[string]any{
		"kind": "Secret",
		"data": map[string]any{"password": plan.SensitivePlaceholder, "user": plan.SensitivePlaceholder},
		"spec": map[string]any{"containers": []any{
			map[string]any{"name": "web", "env": []any{map[string]any{"name": "TOKEN", "value": plan.SensitivePlaceholder}}, "image": "web:1"},
			map[string]any{"name": "side", "args": []any{plan.SensitivePlaceholder}},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	if obj["data"].(map[string]any)["password"] != "aGVsbG8=" {
		t.Fatal("the input was modified")
	}
	if maskObject(nil, nil, nil) != nil {
		t.Fatal("nil is not nil")
	}
}

// TestLiveViewMaskedLeavesLiveAsItWas: a plan keeps the live object
// normalized, with its status and masked; live, shared by every release of
// the plan through its lists, is left as it was.
func TestLiveViewMaskedLeavesLiveAsItWas(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{
			"name": "db", "namespace": "ns", "uid": "u", "resourceVersion": "7",
			"annotations":   map[string]any{lastAppliedAnnotation: "{}", "note": "tok-abcdefgh"},
			"managedFields": []any{map[string]any{"manager": "helm"}},
		},
		"data":   map[string]any{"password": "aGVsbG8="},
		"status": map[string]any{"phase": "tok-abcdefgh"},
	}}
	before := live.DeepCopy()
	got := maskObject(liveView(live), sensitive.New([]string{"tok-abcdefgh"}), []string{"data"})
	want := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "ns", "annotations": map[string]any{"note": plan.SensitivePlaceholder}},
		"data":     map[string]any{"password": plan.SensitivePlaceholder},
		"status":   map[string]any{"phase": plan.SensitivePlaceholder},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	if !reflect.DeepEqual(live.Object, before.Object) {
		t.Fatalf("the live object was changed:\n%v\nwas\n%v", live.Object, before.Object)
	}
	if liveView(nil) != nil {
		t.Fatal("no live object has a view")
	}
}
