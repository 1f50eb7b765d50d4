package kube

import (
	"bytes"
	"strconv"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// inServerOrder reports whether raw, a field set as encoding/json writes
// it from a decoded map (each object's keys sorted as strings), is already
// what serverFieldsOrder would write: in each object every key comes
// before the next in the server's order (".", fields by name, keys and
// values by value, then indexes), and every key is written as the server
// writes it. Most are (a ConfigMap's or a Secret's fields, a list of one
// entry, names that sort alike either way): checking costs a scan, where
// writing the set again costs parsing it. False whenever unsure (a key
// escaped otherwise than `\"`, anything unexpected).
func inServerOrder(raw []byte) bool {
	s := fieldsScanner{b: raw}
	return s.object(true) && s.i == len(raw)
}

type fieldsScanner struct {
	b []byte
	i int
}

// object scans an object of the set; top is the set itself, which the
// server writes without its "." entry.
func (s *fieldsScanner) object(top bool) bool {
	if !s.eat('{') {
		return false
	}
	if s.eat('}') {
		return true
	}
	var prev string
	for n := 0; ; n++ {
		key, ok := s.key()
		if !ok || (key == "." && top) || !canonical(key) || (n > 0 && !serverBefore(prev, key)) {
			return false
		}
		prev = key
		if !s.eat(':') || !s.object(false) {
			return false
		}
		if s.eat('}') {
			// An object holding "." alone is written as a member
			// without children: not as it is.
			return !(n == 0 && key == ".")
		}
		if !s.eat(',') {
			return false
		}
	}
}

func (s *fieldsScanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// key scans a key: a JSON string without escapes but `\"` (the others
// encoding/json and the server may write differently).
func (s *fieldsScanner) key() (string, bool) {
	if !s.eat('"') {
		return "", false
	}
	start, quoted := s.i, false
	for ; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			if s.i+1 >= len(s.b) || s.b[s.i+1] != '"' {
				return "", false
			}
			s.i++
			quoted = true
		case '"':
			text := s.b[start:s.i]
			s.i++
			if !quoted {
				return string(text), true
			}
			return string(bytes.ReplaceAll(text, []byte(`\"`), []byte(`"`))), true
		case '<', '>', '&':
			return "", false // escaped by encoding/json, maybe not by the server
		default:
			if s.b[s.i] < 0x20 || s.b[s.i] >= 0x80 {
				return "", false // control characters, and UTF-8 encoding/json may rewrite
			}
		}
	}
	return "", false
}

// serverRank orders the kinds of path elements as the server does.
var serverRank = map[string]int{"f:": 1, "k:": 2, "v:": 3, "i:": 4}

// serverBefore reports whether key a comes strictly before key b in the
// server's order (fieldpath.PathElement.Compare); false when unsure.
func serverBefore(a, b string) bool {
	rank := func(k string) (int, bool) {
		if k == "." {
			return 0, true
		}
		if len(k) < 2 {
			return 0, false
		}
		r, ok := serverRank[k[:2]]
		return r, ok
	}
	ra, okA := rank(a)
	rb, okB := rank(b)
	switch {
	case !okA || !okB:
		return false
	case ra != rb:
		return ra < rb
	}
	switch a[:min(2, len(a))] {
	case "f:":
		return strings.Compare(a[2:], b[2:]) < 0
	case "i:", "k:", "v:":
		pa, errA := fieldpath.DeserializePathElement(a)
		pb, errB := fieldpath.DeserializePathElement(b)
		return errA == nil && errB == nil && pa.Compare(pb) < 0
	}
	return false
}

// canonical reports whether key is written as the server writes its path
// element (a key or value parsed and written again, an index as a plain
// integer); fields and "." are.
func canonical(key string) bool {
	if len(key) < 2 {
		return key == "."
	}
	switch key[:2] {
	case "f:":
		return true
	case "i:":
		n, err := strconv.Atoi(key[2:])
		return err == nil && n >= 0 && strconv.Itoa(n) == key[2:]
	case "k:", "v:":
		pe, err := fieldpath.DeserializePathElement(key)
		if err != nil {
			return false
		}
		s, err := fieldpath.SerializePathElement(pe)
		return err == nil && s == key
	}
	return false
}
