package kube

import (
	"bytes"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// inServerOrder reports whether raw, a field set as encoding/json writes
// it from a decoded map (each object's keys sorted as strings), is already
// what rewriteFieldsOrder would write: in each object every key comes
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
	var prev serverKey
	for n := 0; ; n++ {
		key, ok := s.key()
		if !ok || (key == "." && top) {
			return false
		}
		k, ok := parseKey(key)
		if !ok || (n > 0 && !prev.before(k)) {
			return false
		}
		prev = k
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

// serverKey is a key of a field set as the server orders it: its kind
// (".", fields, keys, values, indexes, in that order), then a field's name
// or the element's value.
type serverKey struct {
	rank int
	name string
	elem fieldpath.PathElement
}

// serverRank orders the kinds of path elements as the server does.
var serverRank = map[string]int{"f:": 1, "k:": 2, "v:": 3, "i:": 4}

// parseKey is key as the server orders it; false when the server would
// write it otherwise (a key or value not as it serializes them, an index
// not a plain integer) or it is of no kind the server writes.
func parseKey(key string) (serverKey, bool) {
	if key == "." {
		return serverKey{}, true
	}
	if len(key) < 2 {
		return serverKey{}, false
	}
	rank, ok := serverRank[key[:2]]
	if !ok {
		return serverKey{}, false
	}
	if rank == 1 {
		return serverKey{rank: rank, name: key[2:]}, true
	}
	pe, err := fieldpath.DeserializePathElement(key)
	if err != nil {
		return serverKey{}, false
	}
	if s, err := fieldpath.SerializePathElement(pe); err != nil || s != key {
		return serverKey{}, false
	}
	return serverKey{rank: rank, elem: pe}, true
}

// before reports whether a comes strictly before b in the server's order
// (fieldpath.PathElement.Compare).
func (a serverKey) before(b serverKey) bool {
	switch {
	case a.rank != b.rank:
		return a.rank < b.rank
	case a.rank == 0:
		return false // two "."
	case a.rank == 1:
		return a.name < b.name
	}
	return a.elem.Compare(b.elem) < 0
}
