package planner

import (
	"reflect"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
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
