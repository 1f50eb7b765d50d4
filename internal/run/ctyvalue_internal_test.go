package run

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// roundTrip is how outputs were converted before jsonValue: the JSON text
// of the object, its implied type, and cty's decoding of it.
func roundTrip(t *testing.T, v any) cty.Value {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	ty, err := ctyjson.ImpliedType(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ctyjson.Unmarshal(b, ty)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameValue asserts a and b are the same value of the same type, numbers
// at the same precision (which arithmetic on them keeps).
func sameValue(t *testing.T, what string, a, b cty.Value) {
	t.Helper()
	if !a.Type().Equals(b.Type()) {
		t.Fatalf("%s: type %s, want %s", what, a.Type().FriendlyName(), b.Type().FriendlyName())
	}
	if !a.RawEquals(b) {
		t.Fatalf("%s: %#v, want %#v", what, a, b)
	}
	// Precision shows in division.
	if a.Type() == cty.Number && !a.IsNull() {
		three := cty.NumberIntVal(3)
		if qa, qb := a.Divide(three), b.Divide(three); qa.AsBigFloat().Text('g', -1) != qb.AsBigFloat().Text('g', -1) {
			t.Fatalf("%s / 3: %s, want %s", what, qa.AsBigFloat().Text('g', -1), qb.AsBigFloat().Text('g', -1))
		}
	}
	if a.Type().IsObjectType() && !a.IsNull() {
		for k, av := range a.AsValueMap() {
			sameValue(t, what+"."+k, av, b.GetAttr(k))
		}
	}
	if a.Type().IsTupleType() && !a.IsNull() {
		bs := b.AsValueSlice()
		for i, av := range a.AsValueSlice() {
			sameValue(t, what+"["+strconv.Itoa(i)+"]", av, bs[i])
		}
	}
}

func TestJSONValueIsTheJSONRoundTrip(t *testing.T) {
	// A live object as the dynamic client decodes it.
	var obj unstructured.Unstructured
	if err := obj.UnmarshalJSON([]byte(`{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": {"name": "web", "namespace": "ns", "labels": {}, "annotations": {"a": "caf\u0065\u0301"},
			"managedFields": [{"manager": "convoy", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
		"spec": {"replicas": 3, "paused": false, "template": {"spec": {"containers": [], "terminationGracePeriodSeconds": 30}}},
		"status": {"ratio": 0.1, "big": 12345678901234567, "neg": -7, "exp": 1e21, "tiny": 1e-7, "half": 0.5, "none": null,
			"conditions": [{"type": "Available", "status": "True"}, null, 2, "x", [1, [2]]]}
	}`)); err != nil {
		t.Fatal(err)
	}
	got, err := jsonValue(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	sameValue(t, "object", got, roundTrip(t, obj.Object))
}

func TestJSONValueOfRandomValues(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var gen func(depth int) any
	gen = func(depth int) any {
		k := r.IntN(9)
		if depth > 3 && k >= 7 {
			k = r.IntN(7)
		}
		switch k {
		case 0:
			return nil
		case 1:
			return r.IntN(2) == 0
		case 2:
			return r.Int64() - r.Int64()
		case 3:
			return r.NormFloat64() * 1e6
		case 4:
			return float64(r.IntN(1000)) / 10
		case 5:
			return strconv.Itoa(r.IntN(100)) + "é"
		case 6:
			return ""
		case 7:
			m := map[string]any{}
			for i := range r.IntN(4) {
				m["k"+strconv.Itoa(i)] = gen(depth + 1)
			}
			return m
		default:
			s := []any{}
			for range r.IntN(4) {
				s = append(s, gen(depth+1))
			}
			return s
		}
	}
	for i := range 2000 {
		v := gen(0)
		got, err := jsonValue(v)
		if err != nil {
			t.Fatal(err)
		}
		sameValue(t, "value "+strconv.Itoa(i), got, roundTrip(t, v))
	}
}

func TestJSONValueRefusesOtherTypes(t *testing.T) {
	if _, err := jsonValue(map[string]any{"a": []any{struct{}{}}}); err == nil || err.Error() != "a: [0]: unsupported value of type struct {}" {
		t.Fatalf("err = %v", err)
	}
}
