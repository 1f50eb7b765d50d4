package planner_test

import (
	"reflect"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/planner"
)

// requestOnly are the release request's fields a saved plan does not
// record in its plan.ReleaseSettings, and why. A field added to
// release.Request must be mapped by SettingsOf and RequestOf (a field of
// the same name in plan.ReleaseSettings) or named here.
var requestOnly = map[string]string{
	"Name":       "the plan's release (ReleaseChange.Name), given to RequestOf",
	"Namespace":  "the plan's release (ReleaseChange.Namespace), given to RequestOf",
	"Chart":      "the saved payload holds the rendering",
	"RunID":      "the run that applies sets it",
	"Replace":    "the run that applies sets it from the plan's objects (ReplacesOf)",
	"Expand":     "the run that applies sets it from the plan's objects (ResizesOf)",
	"Absent":     "the run that applies sets it from the plan's objects (AbsentOf)",
	"Leftovers":  "the run that applies sets it from the plan's objects (LeftoversOf)",
	"Redact":     "the run that applies sets it from the plan's sensitive values",
	"Health":     "the run that applies compiles it from the stack's health_check blocks",
	"DeleteLast": "the run that applies sets it for a rename",
	"Note":       "the run that applies sets it (who approved, what was overridden)",
	"Lookups":    "a plan's lookups, read once per plan; apply reads the cluster",
}

func fieldNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		out[t.Field(i).Name] = true
	}
	return out
}

// release.Request and plan.ReleaseSettings are mirrored by hand
// (planner/convert.go): every field of one has its counterpart in the
// other, or is one the run sets when it applies (requestOnly).
func TestReleaseSettingsMirrorTheRequest(t *testing.T) {
	req := fieldNames(reflect.TypeFor[release.Request]())
	set := fieldNames(reflect.TypeFor[plan.ReleaseSettings]())
	for name := range req {
		if _, ok := requestOnly[name]; !ok && !set[name] {
			t.Errorf("release.Request.%s is neither saved in plan.ReleaseSettings nor named in requestOnly", name)
		}
	}
	for name := range set {
		if !req[name] {
			t.Errorf("plan.ReleaseSettings.%s has no field of that name in release.Request", name)
		}
		if _, ok := requestOnly[name]; ok {
			t.Errorf("plan.ReleaseSettings.%s is named in requestOnly", name)
		}
	}
	for name := range requestOnly {
		if !req[name] {
			t.Errorf("requestOnly names %s, which release.Request lacks", name)
		}
	}
}

// Every saved setting survives SettingsOf and RequestOf, both ways: a
// field added to both types but not converted is caught.
func TestReleaseSettingsRoundTrip(t *testing.T) {
	req := release.Request{Name: "api", Namespace: "shop"}
	rt := reflect.TypeFor[release.Request]()
	for i := range rt.NumField() {
		if _, ok := requestOnly[rt.Field(i).Name]; !ok {
			fill(reflect.ValueOf(&req).Elem().Field(i))
		}
	}
	back := planner.RequestOf(req.Name, req.Namespace, planner.SettingsOf(&req))
	rv, bv := reflect.ValueOf(req), reflect.ValueOf(back)
	for i := range rt.NumField() {
		f := rt.Field(i)
		if _, ok := requestOnly[f.Name]; ok {
			continue
		}
		if rv.Field(i).IsZero() {
			t.Fatalf("release.Request.%s was not filled", f.Name)
		}
		if !reflect.DeepEqual(rv.Field(i).Interface(), bv.Field(i).Interface()) {
			t.Errorf("release.Request.%s = %#v is %#v after SettingsOf and RequestOf", f.Name, rv.Field(i).Interface(), bv.Field(i).Interface())
		}
	}

	var s plan.ReleaseSettings
	fill(reflect.ValueOf(&s).Elem())
	st := reflect.TypeFor[plan.ReleaseSettings]()
	for i := range st.NumField() {
		if reflect.ValueOf(s).Field(i).IsZero() {
			t.Fatalf("plan.ReleaseSettings.%s was not filled", st.Field(i).Name)
		}
	}
	r := planner.RequestOf("api", "shop", s)
	sv, gv := reflect.ValueOf(s), reflect.ValueOf(planner.SettingsOf(&r))
	for i := range st.NumField() {
		if !reflect.DeepEqual(sv.Field(i).Interface(), gv.Field(i).Interface()) {
			t.Errorf("plan.ReleaseSettings.%s = %#v is %#v after RequestOf and SettingsOf", st.Field(i).Name, sv.Field(i).Interface(), gv.Field(i).Interface())
		}
	}
}

// fill sets every settable field of v to a value that is not its zero
// value (the wait modes to a valid one), recursively.
func fill(v reflect.Value) {
	switch v.Type() {
	case reflect.TypeFor[plan.Wait]():
		v.Set(reflect.ValueOf(plan.WaitReadyAndJobs))
		return
	case reflect.TypeFor[release.WaitMode]():
		v.Set(reflect.ValueOf(release.WaitReadyAndJobs))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(3)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(3)
	case reflect.String:
		v.SetString("x-" + v.Type().Name())
	case reflect.Pointer:
		if v.Type().Elem().Kind() == reflect.Struct && v.Type().Elem().NumField() > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		if e.Kind() == reflect.Interface {
			e.Set(reflect.ValueOf("value"))
		} else {
			fill(e)
		}
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}
