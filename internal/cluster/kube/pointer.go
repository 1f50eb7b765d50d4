package kube

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Pointer is a parsed JSON pointer (RFC 6901) to a field of an object:
// map keys, and decimal indexes for list elements. It is text in
// configuration and saved plans ("/spec/replicas") and parsed once.
type Pointer []string

// ParsePointer parses a JSON pointer. The whole document ("") and the
// object's identity (apiVersion, kind, metadata.name and namespace) are not
// fields that can be left to others, and are refused.
func ParsePointer(s string) (Pointer, error) {
	if s == "" || s[0] != '/' {
		return nil, fmt.Errorf("%q is not a JSON pointer: it must start with \"/\", as in /spec/replicas", s)
	}
	var p Pointer
	for _, tok := range strings.Split(s[1:], "/") {
		for i := 0; i < len(tok); i++ {
			if tok[i] == '~' && (i+1 == len(tok) || (tok[i+1] != '0' && tok[i+1] != '1')) {
				return nil, fmt.Errorf("%q is not a JSON pointer: \"~\" must be escaped as ~0 (and \"/\" as ~1)", s)
			}
		}
		p = append(p, strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"))
	}
	if p.isIdentity() {
		return nil, fmt.Errorf("%s is part of the object's identity, which apply always sets", s)
	}
	return p, nil
}

func (p Pointer) isIdentity() bool {
	switch {
	case len(p) == 1 && (p[0] == "apiVersion" || p[0] == "kind" || p[0] == "metadata"):
		return true
	case len(p) == 2 && p[0] == "metadata" && (p[1] == "name" || p[1] == "namespace"):
		return true
	}
	return false
}

// String is the pointer's text, as ParsePointer reads it.
func (p Pointer) String() string {
	var b strings.Builder
	for _, tok := range p {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// MarshalText writes the pointer as text (saved plans).
func (p Pointer) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses a pointer written by MarshalText.
func (p *Pointer) UnmarshalText(b []byte) error {
	got, err := ParsePointer(string(b))
	if err != nil {
		return err
	}
	*p = got
	return nil
}

// index reads a list index token.
func index(tok string, n int) (int, bool) {
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 || i >= n || strconv.Itoa(i) != tok {
		return 0, false
	}
	return i, true
}

// lookup finds the value at p in v.
func lookup(v any, p Pointer) (any, bool) {
	for _, tok := range p {
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, ok := index(tok, len(c))
			if !ok {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// errNoParent: the field's parent is not in the object.
var errNoParent = errors.New("no parent")

// replace sets the existing field at p in v (a map, modified in place).
func replace(v any, p Pointer, value any) error {
	if len(p) == 0 {
		return errNoParent
	}
	parent, ok := lookup(v, p[:len(p)-1])
	if !ok {
		return errNoParent
	}
	last := p[len(p)-1]
	switch c := parent.(type) {
	case map[string]any:
		c[last] = value
		return nil
	case []any:
		if i, ok := index(last, len(c)); ok {
			c[i] = value
			return nil
		}
	}
	return errNoParent
}

// remove deletes the field at p from v (a map, modified in place), with
// the maps it leaves empty: an empty map would still claim the field.
func remove(v map[string]any, p Pointer) {
	if len(p) == 0 {
		return
	}
	parent, ok := lookup(v, p[:len(p)-1])
	if !ok {
		return
	}
	last := p[len(p)-1]
	switch c := parent.(type) {
	case map[string]any:
		delete(c, last)
		if len(c) == 0 && len(p) > 1 {
			remove(v, p[:len(p)-1])
		}
	case []any:
		if i, ok := index(last, len(c)); ok {
			rest := append(c[:i:i], c[i+1:]...)
			_ = replace(v, p[:len(p)-1], rest)
		}
	}
}
