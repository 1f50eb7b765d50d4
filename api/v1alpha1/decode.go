package v1alpha1

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UnmarshalJSON decodes a spec field by field when it does not decode as
// a whole: a field written before the CRD's schema checked it (interval:
// "five minutes") is left unset and recorded (DecodeError), so that one
// such Stack cannot fail the decoding of a list of Stacks — the
// controller's informer, convoy's Stack commands — and the controller
// reports it as that Stack's condition.
func (s *StackSpec) UnmarshalJSON(b []byte) error {
	type plain StackSpec
	if err := json.Unmarshal(b, (*plain)(s)); err == nil {
		s.decodeErrors = nil
		return nil
	}
	*s = StackSpec{}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		s.decodeErrors = []string{"spec: " + err.Error()}
		return nil
	}
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		raw, ok := fields[name]
		if name == "" || name == "-" || !ok {
			continue
		}
		if err := json.Unmarshal(raw, v.Field(i).Addr().Interface()); err != nil {
			v.Field(i).SetZero()
			s.decodeErrors = append(s.decodeErrors, fmt.Sprintf("spec.%s: %s", name, fieldError(err, raw)))
		}
	}
	return nil
}

// fieldError is the cause of a field's decode error, without Go type
// names where a person can do without them.
func fieldError(err error, raw json.RawMessage) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s is not a %s", raw, jsonKind(te.Type))
	}
	return err.Error()
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeOf(metav1.Duration{}), reflect.TypeOf(time.Duration(0)):
		return "duration"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Slice:
		return "list"
	}
	return t.String()
}

// DecodeError says which fields of the spec did not decode (nil when all
// did).
func (s *StackSpec) DecodeError() error {
	if len(s.decodeErrors) == 0 {
		return nil
	}
	return errors.New(strings.Join(s.decodeErrors, "; "))
}
