package chart

import (
	"encoding/json"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"
)

// marshalYAML is sigs.k8s.io/yaml.Marshal(v), Helm's toYaml, without its
// detour through JSON text for the values templates pass it: Marshal
// encodes v as JSON, parses that with yaml.v2 into maps, slices and
// scalars, and encodes those as YAML. asYAMLv2 builds what that parse
// yields from v directly; what it does not know to build exactly, or what
// the detour refuses (NaN, a cycle, a character yaml.v2 does not read),
// goes the whole way as before. FuzzMarshalYAMLAsSigs holds the two to
// the same bytes and errors.
func marshalYAML(v any) ([]byte, error) {
	if y, ok := asYAMLv2(v, 0); ok {
		return yamlv2.Marshal(y)
	}
	return yaml.Marshal(v)
}

// maxYAMLDepth is how deep asYAMLv2 goes before it leaves a value to the
// detour (which refuses a cyclic one, as encoding/json does).
const maxYAMLDepth = 200

// asYAMLv2 is what yaml.v2 parses json.Marshal(v) into, and whether v is
// made only of what it builds so: nil, bools, strings, numbers and
// map[string]any and []any of them.
func asYAMLv2(v any, depth int) (any, bool) {
	if depth > maxYAMLDepth {
		return nil, false
	}
	switch t := v.(type) {
	case nil:
		return nil, true
	case bool:
		return t, true
	case string:
		return yamlString(t)
	case map[string]any:
		if t == nil {
			return nil, true // JSON's null
		}
		out := make(map[any]any, len(t))
		for k, e := range t {
			if !utf8.ValidString(k) {
				return nil, false // two keys could become one
			}
			key, ok := yamlString(k)
			if !ok {
				return nil, false
			}
			y, ok := asYAMLv2(e, depth+1)
			if !ok {
				return nil, false
			}
			out[key] = y
		}
		return out, true
	case []any:
		if t == nil {
			return nil, true
		}
		out := make([]any, len(t))
		for i, e := range t {
			y, ok := asYAMLv2(e, depth+1)
			if !ok {
				return nil, false
			}
			out[i] = y
		}
		return out, true
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float64:
		return yamlNumber(t)
	}
	return nil, false
}

// yamlNumber is the number as yaml.v2 reads encoding/json's text of it
// (an int, int64, uint64 or float64): that text, parsed alone.
func yamlNumber(n any) (any, bool) {
	text, err := json.Marshal(n)
	if err != nil {
		return nil, false // NaN or an infinity: the detour says why
	}
	var out any
	if err := yamlv2.Unmarshal(text, &out); err != nil {
		return nil, false
	}
	return out, true
}

// yamlString is s as yaml.v2 reads encoding/json's quoted text of it:
// every byte that is not UTF-8 becomes U+FFFD. Not ok when s holds DEL or
// a C1 control, which json.Marshal writes as they are: yaml.v2 refuses to
// read them, or reads NEL as a line break, folded.
func yamlString(s string) (string, bool) {
	valid := true
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				valid = false
			}
		case r == 0x7f, r >= 0x80 && r < 0xa0:
			return "", false
		}
	}
	if valid {
		return s, true
	}
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return string(out), true
}
