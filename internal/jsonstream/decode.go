package jsonstream

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// Decode reads the next JSON value of dec into v (a non-nil pointer), as
// dec.Decode(v) would, but struct by struct and element by element: dec
// buffers one field or element at a time (a map, a string, a number),
// never the whole value. Options set on dec (UseNumber) apply.
func Decode(dec *json.Decoder, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("jsonstream: Decode needs a non-nil pointer")
	}
	return decodeValue(dec, rv.Elem())
}

// walked reports whether values of t are decoded here rather than by
// encoding/json: structs that structFields takes, slices of anything but
// bytes, and pointers to those.
func walked(t reflect.Type) bool {
	if reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return false
	}
	switch t.Kind() {
	case reflect.Pointer:
		return walked(t.Elem())
	case reflect.Struct:
		_, ok := structFields(t)
		return ok
	case reflect.Slice:
		return t.Elem().Kind() != reflect.Uint8
	}
	return false
}

func decodeValue(dec *json.Decoder, v reflect.Value) error {
	if !walked(v.Type()) {
		return dec.Decode(v.Addr().Interface())
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	return decodeOpened(dec, v, tok)
}

// decodeOpened decodes into v (walked) the value whose first token, tok,
// has been read.
func decodeOpened(dec *json.Decoder, v reflect.Value, tok json.Token) error {
	t := v.Type()
	if tok == nil { // null: nil for pointers and slices, nothing for structs, as encoding/json
		if t.Kind() != reflect.Struct {
			v.SetZero()
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		return decodeOpened(dec, v.Elem(), tok)
	case reflect.Struct:
		if tok != json.Delim('{') {
			return &json.UnmarshalTypeError{Value: fmt.Sprint(tok), Type: t}
		}
		fields, _ := structFields(t)
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			f := fieldNamed(fields, k.(string))
			if f == nil {
				var skip json.RawMessage // unknown: ignored, as encoding/json
				if err := dec.Decode(&skip); err != nil {
					return err
				}
				continue
			}
			if err := decodeValue(dec, v.Field(f.index)); err != nil {
				return err
			}
		}
		_, err := dec.Token() // }
		return err
	case reflect.Slice:
		if tok != json.Delim('[') {
			return &json.UnmarshalTypeError{Value: fmt.Sprint(tok), Type: t}
		}
		s := reflect.MakeSlice(t, 0, 0)
		for dec.More() {
			el := reflect.New(t.Elem()).Elem()
			if err := decodeValue(dec, el); err != nil {
				return err
			}
			s = reflect.Append(s, el)
		}
		v.Set(s)
		_, err := dec.Token() // ]
		return err
	}
	return fmt.Errorf("jsonstream: cannot decode into %s", t)
}

// fieldNamed is the field a key sets: its exact name, else one equal
// without regard to case, as encoding/json matches them.
func fieldNamed(fields []field, k string) *field {
	for i := range fields {
		if fields[i].name == k {
			return &fields[i]
		}
	}
	for i := range fields {
		if strings.EqualFold(fields[i].name, k) {
			return &fields[i]
		}
	}
	return nil
}
