package plan

import (
	"fmt"
	"maps"
	"slices"
)

// Leaves are the scalar leaves of a JSON-like value with their paths below
// path: a map's keys (sorted) and a list's indexes. Empty maps and lists are
// leaves themselves.
func Leaves(path string, v any) []Leaf {
	var out []Leaf
	var walk func(string, any)
	walk = func(p string, v any) {
		switch t := v.(type) {
		case map[string]any:
			if len(t) == 0 {
				out = append(out, Leaf{p, t})
				return
			}
			for _, k := range slices.Sorted(maps.Keys(t)) {
				walk(JoinKey(p, k), t[k])
			}
		case []any:
			if len(t) == 0 {
				out = append(out, Leaf{p, t})
				return
			}
			for i, e := range t {
				walk(fmt.Sprintf("%s[%d]", p, i), e)
			}
		default:
			out = append(out, Leaf{p, v})
		}
	}
	walk(path, v)
	return out
}

// Leaf is one scalar (or empty structure) of a value, at its path.
type Leaf struct {
	Path  string
	Value any
}

func isStructure(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// splitSensitive replaces each added or removed structure that the
// predicate would mask with one change per leaf, so that masking hides the
// leaves that hold a secret and not their siblings.
func (d *Diff) splitSensitive(sensitive func(c *Change) bool) {
	var out []*Change
	for _, c := range d.Changes {
		v := c.After
		if c.Op == FieldRemove {
			v = c.Before
		}
		if c.Sensitive || c.Op == FieldChange || !isStructure(v) || !sensitive(c) {
			out = append(out, c)
			continue
		}
		for _, l := range Leaves(c.Path, v) {
			leaf := &Change{Path: l.Path, Op: c.Op, Manager: c.Manager}
			if c.Op == FieldAdd {
				leaf.After = l.Value
			} else {
				leaf.Before = l.Value
			}
			out = append(out, leaf)
		}
	}
	d.Changes = out
}
