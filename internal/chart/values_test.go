package chart

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSet(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]any
		wantErr string
	}{
		{in: "a=b", want: map[string]any{"a": "b"}},
		{in: "a.b=c,d=e", want: map[string]any{"a": map[string]any{"b": "c"}, "d": "e"}},
		{in: `a\.b=c`, want: map[string]any{"a.b": "c"}},
		{in: `a=b\,c`, want: map[string]any{"a": "b,c"}},
		{in: "a[1].b=c", want: map[string]any{"a": []any{nil, map[string]any{"b": "c"}}}},
		{in: "a[0][1]=x", want: map[string]any{"a": []any{[]any{nil, "x"}}}},
		{in: "a={1,two,true}", want: map[string]any{"a": []any{int64(1), "two", true}}},
		{in: "a=null", want: map[string]any{"a": nil}},
		{in: "a=", want: map[string]any{"a": ""}},
		{in: "a=0,b=007,c=-3,d=TRUE,e=1.5", want: map[string]any{"a": int64(0), "b": "007", "c": int64(-3), "d": true, "e": "1.5"}},
		{in: "a", wantErr: `key "a" has no value`},
		{in: "a=1,b", wantErr: `key "b" has no value`},
		{in: "a,b=1", wantErr: `key "a" has no value (cannot end with ,)`},
		{in: "a={1,2", wantErr: "list must terminate with '}'"},
		{in: "a[x]=1", wantErr: `error parsing index: strconv.Atoi: parsing "x": invalid syntax`},
		{in: "a[-1]=1", wantErr: "negative -1 index not allowed"},
		{in: "a[65537]=1", wantErr: "index of 65537 is greater than maximum supported index of 65536"},
		{in: "a[0]x=1", wantErr: `unexpected data at end of array index: "x"`},
		{in: "a=1,a.b=2", wantErr: "unable to parse key: interface conversion: interface {} is int64, not map[string]interface {}"},
		{in: "a=1,a[0]=2", wantErr: "unable to parse key: interface conversion: interface {} is int64, not []interface {}"},
		{in: "a[0]=1,a[0][0]=2", wantErr: "unable to parse key: interface conversion: interface {} is int64, not []interface {}"},
		{in: strings.Repeat("a.", 31) + "b=1", wantErr: "value name nested level is greater than maximum supported nested level of 30"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := map[string]any{}
			err := ParseSet(tc.in, got)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestParseSetIntoExisting(t *testing.T) {
	base := map[string]any{"a": map[string]any{"keep": 1, "b": "old"}, "l": []any{"x", "y"}}
	if err := ParseSet("a.b=new,l[1]=z", base); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": map[string]any{"keep": 1, "b": "new"}, "l": []any{"x", "z"}}
	if !reflect.DeepEqual(base, want) {
		t.Fatalf("got %#v", base)
	}
}

func TestUserValues(t *testing.T) {
	l1, err := ParseValues([]byte("a: {b: 1, c: 2}\nlist: [1, 2]\n---\nd: doc2\n"))
	if err != nil {
		t.Fatal(err)
	}
	l2, err := ParseValues([]byte("a: {c: null, e: 3}\nlist: [9]"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := UserValues([]map[string]any{l1, l2}, []string{"a.f=4", "list[1]=x"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"a":    map[string]any{"b": float64(1), "c": nil, "e": float64(3), "f": int64(4)},
		"list": []any{float64(9), "x"},
		"d":    "doc2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	if _, ok := l1["a"].(map[string]any)["f"]; ok {
		t.Error("UserValues modified a layer")
	}
	if _, err := UserValues(nil, []string{"a"}); err == nil || err.Error() != `failed parsing --set data: key "a" has no value` {
		t.Errorf("got %v", err)
	}
}

func TestCoalesceValues(t *testing.T) {
	sub := &Chart{Metadata: &Metadata{Name: "sub", Version: "1.0.0", APIVersion: "v2"},
		Values: map[string]any{"s": "sub-default", "global": map[string]any{"g": "sub", "only": "sub"}}}
	top := &Chart{Metadata: &Metadata{Name: "top", Version: "1.0.0", APIVersion: "v2"},
		Values: map[string]any{
			"keep":   "default",
			"gone":   "default",
			"list":   []any{"a", "b"},
			"table":  map[string]any{"x": 1, "y": 2},
			"global": map[string]any{"g": "top"},
		}}
	sub.parent = top
	top.dependencies = []*Chart{sub}
	user := map[string]any{"gone": nil, "list": []any{"c"}, "table": map[string]any{"y": nil, "z": 3}, "sub": map[string]any{"s": "user"}}
	got, err := CoalesceValues(top, user)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"keep":   "default",
		"list":   []any{"c"},
		"table":  map[string]any{"x": 1, "z": 3},
		"global": map[string]any{"g": "top"},
		"sub": map[string]any{
			"s":      "user",
			"global": map[string]any{"g": "top", "only": "sub"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
	if top.Values["gone"] != "default" || sub.Values["global"].(map[string]any)["g"] != "sub" {
		t.Error("CoalesceValues modified the chart")
	}
}
