// Package jsonstream encodes and decodes large values as encoding/json
// does, without holding their whole JSON text in memory: encoding/json
// builds a value's text in one buffer before writing it, and a Decoder
// reads a whole value before decoding it, so a release record or a saved
// plan of tens of MiB would cost that much again, and more as the buffer
// doubles. Structs, pointers and slices are walked here; everything else
// (maps, interfaces, numbers, types with their own JSON or text methods)
// is handed to encoding/json one value at a time, and long strings and
// byte slices are written in pieces. The bytes are encoding/json's.
package jsonstream

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// chunk is the size of the pieces long strings and byte slices are
// written in (a multiple of 3, so that base64 pieces join without
// padding).
const chunk = 48 << 10

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	numberType        = reflect.TypeFor[json.Number]()
)

// Encode writes json.Marshal(v)'s bytes to w.
func Encode(w io.Writer, v any) error {
	e := &encoder{w: w}
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return e.write("null")
	}
	// Walked from an addressable copy, as json.Marshal sees a pointer's
	// target: methods on pointer receivers are called the same way.
	p := reflect.New(rv.Type())
	p.Elem().Set(rv)
	return e.value(p.Elem())
}

type encoder struct {
	w   io.Writer
	err error
}

func (e *encoder) write(s string) error {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
	return e.err
}

func (e *encoder) writeBytes(b []byte) error {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
	return e.err
}

// leaf writes v through encoding/json, by its address when it has one
// (methods on pointer receivers apply then, as encoding/json calls them
// on what it reaches through a pointer).
func (e *encoder) leaf(v reflect.Value) error {
	var x any
	if v.CanAddr() {
		x = v.Addr().Interface()
	} else {
		x = v.Interface()
	}
	b, err := json.Marshal(x)
	if err != nil {
		return err
	}
	return e.writeBytes(b)
}

// hasMethods reports whether t (or, when addressable, *t) has its own
// JSON or text encoding.
func hasMethods(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		pt.Implements(marshalerType) || pt.Implements(textMarshalerType)
}

func (e *encoder) value(v reflect.Value) error {
	t := v.Type()
	if hasMethods(t) || t == numberType {
		return e.leaf(v)
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return e.write("null")
		}
		return e.value(v.Elem())
	case reflect.Struct:
		fields, ok := structFields(t)
		if !ok {
			return e.leaf(v)
		}
		return e.object(v, fields)
	case reflect.Slice:
		if v.IsNil() {
			return e.write("null")
		}
		if t.Elem().Kind() == reflect.Uint8 && !hasMethods(t.Elem()) {
			return e.bytes(v.Bytes())
		}
		if e.write("[") != nil {
			return e.err
		}
		for i := range v.Len() {
			if i > 0 && e.write(",") != nil {
				return e.err
			}
			if err := e.value(v.Index(i)); err != nil {
				return err
			}
		}
		return e.write("]")
	case reflect.String:
		if v.Len() > chunk {
			return e.string(v.String())
		}
	}
	return e.leaf(v)
}

func (e *encoder) object(v reflect.Value, fields []field) error {
	if e.write("{") != nil {
		return e.err
	}
	first := true
	for _, f := range fields {
		fv := v.Field(f.index)
		if (f.omitEmpty && isEmpty(fv)) || (f.omitZero && isZero(fv)) {
			continue
		}
		if !first && e.write(",") != nil {
			return e.err
		}
		first = false
		if e.writeBytes(f.key) != nil {
			return e.err
		}
		if err := e.value(fv); err != nil {
			return err
		}
	}
	return e.write("}")
}

// string writes a long string in pieces split where runes start: each
// rune is escaped on its own (invalid bytes one by one), so the pieces'
// escapes are the whole string's.
func (e *encoder) string(s string) error {
	if e.write(`"`) != nil {
		return e.err
	}
	for len(s) > 0 {
		n := min(chunk, len(s))
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		b, err := json.Marshal(s[:n])
		if err != nil {
			return err
		}
		if e.writeBytes(b[1:len(b)-1]) != nil {
			return e.err
		}
		s = s[n:]
	}
	return e.write(`"`)
}

// bytes writes a byte slice as encoding/json does, base64 in pieces.
func (e *encoder) bytes(b []byte) error {
	if e.write(`"`) != nil {
		return e.err
	}
	buf := make([]byte, base64.StdEncoding.EncodedLen(min(chunk, len(b))))
	for len(b) > 0 {
		n := min(chunk, len(b))
		m := base64.StdEncoding.EncodedLen(n)
		base64.StdEncoding.Encode(buf[:m], b[:n])
		if e.writeBytes(buf[:m]) != nil {
			return e.err
		}
		b = b[n:]
	}
	return e.write(`"`)
}

// field is a struct field as encoding/json names it.
type field struct {
	index               int
	name                string
	key                 []byte // the quoted name and a colon
	omitEmpty, omitZero bool
}

// structFields are t's fields as encoding/json encodes them; false when
// t has what this package does not walk (embedded fields, the string
// option, names encoding/json would not take), and encoding/json then
// encodes the whole struct.
func structFields(t reflect.Type) ([]field, bool) {
	if c, ok := fieldsOf.Load(t); ok {
		c := c.(cachedFields)
		return c.fields, c.ok
	}
	fields, ok := parseFields(t)
	fieldsOf.Store(t, cachedFields{fields, ok})
	return fields, ok
}

// fieldsOf caches structFields by type (reflect.Type → cachedFields): a
// record walks one struct type per chart file, template and hook.
var fieldsOf sync.Map

type cachedFields struct {
	fields []field
	ok     bool
}

// parseFields is structFields computed.
func parseFields(t reflect.Type) ([]field, bool) {
	var out []field
	seen := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil, false
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !validName(name) {
			return nil, false
		}
		if name == "" {
			name = f.Name
		}
		if seen[name] {
			return nil, false // encoding/json's rules for clashes
		}
		seen[name] = true
		fl := field{index: i, name: name}
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "omitempty":
				fl.omitEmpty = true
			case "omitzero":
				fl.omitZero = true
			case "string":
				return nil, false
			}
		}
		k, err := json.Marshal(name)
		if err != nil {
			return nil, false
		}
		fl.key = append(k, ':')
		out = append(out, fl)
	}
	return out, true
}

// validName accepts the tag names that are plainly valid for
// encoding/json (letters, digits, and a few punctuation characters).
func validName(s string) bool {
	for _, c := range s {
		switch {
		case c == '_' || c == '-' || c == '.' || c == '/' || c == '$' || c == '@':
		case c < utf8.RuneSelf && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'):
		default:
			return false
		}
	}
	return true
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

type isZeroer interface{ IsZero() bool }

var isZeroerType = reflect.TypeFor[isZeroer]()

// isZero is encoding/json's omitzero test: the type's IsZero method, else
// the zero value.
func isZero(v reflect.Value) bool {
	t := v.Type()
	switch {
	case t.Implements(isZeroerType):
		if t.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return v.Interface().(isZeroer).IsZero()
	case reflect.PointerTo(t).Implements(isZeroerType) && v.CanAddr():
		return v.Addr().Interface().(isZeroer).IsZero()
	}
	return v.IsZero()
}
