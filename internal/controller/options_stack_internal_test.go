package controller

import (
	"bytes"
	"reflect"
	"testing"
)

// Every setting a Stack reads is the controller's of the same name: a
// field added to stack.Options and not copied by stackOptions fails here.
func TestStackOptionsCopyEverySetting(t *testing.T) {
	var o Options
	ov := reflect.ValueOf(&o).Elem()
	st := reflect.TypeOf(o.stackOptions())
	for i := range st.NumField() {
		f := st.Field(i)
		src := ov.FieldByName(f.Name)
		if !src.IsValid() {
			t.Fatalf("stack.Options.%s has no controller.Options field of its name", f.Name)
		}
		if src.Type() != f.Type {
			t.Fatalf("stack.Options.%s is a %s, controller.Options.%s a %s", f.Name, f.Type, f.Name, src.Type())
		}
		src.Set(nonZero(t, f.Name, f.Type))
	}
	got := reflect.ValueOf(o.stackOptions())
	for i := range st.NumField() {
		name := st.Field(i).Name
		if !reflect.DeepEqual(got.Field(i).Interface(), ov.FieldByName(name).Interface()) {
			t.Errorf("stackOptions does not copy %s", name)
		}
	}
}

// nonZero is a value of typ other than its zero value.
func nonZero(t *testing.T, name string, typ reflect.Type) reflect.Value {
	t.Helper()
	v := reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(7)
	case reflect.Interface:
		var w bytes.Buffer
		if !reflect.TypeOf(&w).Implements(typ) {
			t.Fatalf("no value for %s (%s): add one to nonZero", name, typ)
		}
		v.Set(reflect.ValueOf(&w))
	default:
		t.Fatalf("no value for %s (%s): add one to nonZero", name, typ)
	}
	return v
}
