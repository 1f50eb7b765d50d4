package v1alpha1_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/convoy-sh/convoy/api/v1alpha1"
)

// The DeepCopy functions of the API types are written by hand. This test
// guards them by reflection, so that it covers fields added later without
// being edited: every field of every type reachable from the objects below
// (exported or not, through pointers, slices and maps) is filled with
// random values, then the object is copied and
//
//   - the copy equals the original (no field lost or changed),
//   - no pointer, slice or map of the copy is shared with the original
//     (a new pointer, slice or map field must be copied, not assigned),
//   - changing every value reachable from the copy leaves the original as
//     it was.
//
// A field of a kind it cannot fill (an interface, a func, a channel) fails
// the test: teach fill about it.
func TestDeepCopyCopiesEveryField(t *testing.T) {
	objects := map[string]func() runtime.Object{
		"Stack":        func() runtime.Object { return new(v1alpha1.Stack) },
		"StackList":    func() runtime.Object { return new(v1alpha1.StackList) },
		"Pipeline":     func() runtime.Object { return new(v1alpha1.Pipeline) },
		"PipelineList": func() runtime.Object { return new(v1alpha1.PipelineList) },
	}
	for name, newObj := range objects {
		t.Run(name, func(t *testing.T) {
			// Seed 0 fills every pointer, slice and map; the others leave
			// a quarter of them nil (nil must stay nil, not become empty).
			for seed := int64(0); seed < 40; seed++ {
				nilChance := 0.25
				if seed == 0 {
					nilChance = 0
				}
				build := func() runtime.Object {
					obj := newObj()
					f := filler{r: rand.New(rand.NewSource(seed)), nilChance: nilChance}
					f.fill(reflect.ValueOf(obj).Elem(), name)
					if f.err != nil {
						t.Fatal(f.err)
					}
					return obj
				}
				orig, want := build(), build() // the same values, twice
				cp := orig.DeepCopyObject()

				if diff := cmp.Diff(orig, cp, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
					t.Fatalf("seed %d: the copy differs from the original (-original +copy):\n%s", seed, diff)
				}
				for _, path := range shared(reflect.ValueOf(orig).Elem(), reflect.ValueOf(cp).Elem(), name) {
					t.Errorf("seed %d: %s is shared by the copy and the original: DeepCopyInto must copy it", seed, path)
				}
				mutate(reflect.ValueOf(cp).Elem())
				if reflect.DeepEqual(cp, want) {
					t.Fatalf("seed %d: mutate changed nothing: the test is not testing", seed)
				}
				if diff := cmp.Diff(want, orig, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
					t.Fatalf("seed %d: changing the copy changed the original (-before +after):\n%s", seed, diff)
				}
			}
		})
	}
}

// The zero value copies to the zero value: nil slices and maps stay nil.
func TestDeepCopyOfZeroValues(t *testing.T) {
	for _, obj := range []runtime.Object{&v1alpha1.Stack{}, &v1alpha1.StackList{}, &v1alpha1.Pipeline{}, &v1alpha1.PipelineList{}} {
		if cp := obj.DeepCopyObject(); !reflect.DeepEqual(cp, obj) {
			t.Errorf("%T: the copy of the zero value is %#v", obj, cp)
		}
	}
}

var timeType = reflect.TypeFor[time.Time]()

// settable returns v itself, or for an unexported field a settable view of
// the same memory (v must be addressable).
func settable(v reflect.Value) reflect.Value {
	if v.CanSet() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

type filler struct {
	r         *rand.Rand
	nilChance float64
	err       error
}

// fill sets v (settable) and everything under it to random non-zero values.
func (f *filler) fill(v reflect.Value, path string) {
	if f.err != nil {
		return
	}
	if len(path) > 2000 {
		f.err = fmt.Errorf("%s: too deep (a recursive type?)", path)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(time.Unix(1+f.r.Int63n(1<<32), 0).UTC()))
			return
		}
		for i := range v.NumField() {
			f.fill(settable(v.Field(i)), path+"."+v.Type().Field(i).Name)
		}
	case reflect.Pointer:
		if f.r.Float64() < f.nilChance {
			return
		}
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), path)
		v.Set(p)
	case reflect.Slice:
		if f.r.Float64() < f.nilChance {
			return
		}
		s := reflect.MakeSlice(v.Type(), 1+f.r.Intn(3), 3)
		for i := range s.Len() {
			f.fill(s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	case reflect.Map:
		if f.r.Float64() < f.nilChance {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range 1 + f.r.Intn(3) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			f.fill(k, path+"[key]")
			f.fill(e, path+"[value]")
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", f.r.Intn(1000)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1 + f.r.Int63n(100))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1 + uint64(f.r.Int63n(100)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1 + f.r.Float64())
	default:
		f.err = fmt.Errorf("%s: cannot fill a %s (%s): teach the test about it", path, v.Kind(), v.Type())
	}
}

// shared lists the paths at which a and b (the original and its copy) hold
// the same pointer, slice backing array or map. Pointers to zero-size
// values (an empty struct) may be equal without sharing anything.
func shared(a, b reflect.Value, path string) []string {
	var out []string
	switch a.Kind() {
	case reflect.Struct:
		if a.Type() == timeType {
			return nil // a value; its *Location is immutable
		}
		for i := range a.NumField() {
			out = append(out, shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)...)
		}
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return nil
		}
		if a.Pointer() == b.Pointer() && a.Type().Elem().Size() > 0 {
			out = append(out, path+" (a pointer)")
		}
		out = append(out, shared(a.Elem(), b.Elem(), path)...)
	case reflect.Slice:
		if a.Len() == 0 || b.Len() == 0 {
			return nil
		}
		if a.Pointer() == b.Pointer() && a.Type().Elem().Size() > 0 {
			out = append(out, path+" (a slice)")
		}
		for i := range min(a.Len(), b.Len()) {
			out = append(out, shared(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case reflect.Map:
		if a.IsNil() || b.IsNil() {
			return nil
		}
		if a.Pointer() == b.Pointer() {
			out = append(out, path+" (a map)")
		}
		for _, k := range a.MapKeys() {
			if bv := b.MapIndex(k); bv.IsValid() {
				out = append(out, shared(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k))...)
			}
		}
	}
	return out
}

// mutate changes every value reachable from v (settable) in place: through
// pointers, in slices' elements and in maps' values, as code holding the
// copy might.
func mutate(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Hour)))
			return
		}
		for i := range v.NumField() {
			mutate(settable(v.Field(i)))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			mutate(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			mutate(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			mutate(e)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		v.SetString(v.String() + "'")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	}
}
