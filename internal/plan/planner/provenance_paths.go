package planner

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
)

// pathSeg is one step of a field path as plan.Compare prints it: a map
// key (`.name`, `["app.conf"]`), a list index (`[0]`) or a list element
// by its identity key (`[name=web]`).
type pathSeg struct {
	key       string
	index     int
	isIndex   bool
	matchKey  string // [matchKey=key]
	isElement bool
}

// parsePath splits a plan.Change path into its steps.
func parsePath(p string) ([]pathSeg, bool) {
	var out []pathSeg
	ident := func(i int) (string, int) {
		j := i
		for j < len(p) && p[j] != '.' && p[j] != '[' {
			j++
		}
		return p[i:j], j
	}
	for i := 0; i < len(p); {
		switch p[i] {
		case '.':
			k, j := ident(i + 1)
			if k == "" {
				return nil, false
			}
			out, i = append(out, pathSeg{key: k}), j
		case '[':
			if i+1 < len(p) && p[i+1] == '"' {
				q, err := strconv.QuotedPrefix(p[i+1:])
				if err != nil {
					return nil, false
				}
				k, _ := strconv.Unquote(q)
				j := i + 1 + len(q)
				if j >= len(p) || p[j] != ']' {
					return nil, false
				}
				out, i = append(out, pathSeg{key: k}), j+1
				continue
			}
			// The closing bracket is the one followed by the end, a key or
			// another bracket: an element's identity may hold brackets.
			j := i + 1
			for ; j < len(p); j++ {
				if p[j] == ']' && (j+1 == len(p) || p[j+1] == '.' || p[j+1] == '[') {
					break
				}
			}
			if j >= len(p) {
				return nil, false
			}
			inner := p[i+1 : j]
			if n, err := strconv.Atoi(inner); err == nil {
				out = append(out, pathSeg{index: n, isIndex: true})
			} else if k, id, ok := strings.Cut(inner, "="); ok {
				out = append(out, pathSeg{matchKey: k, key: id, isElement: true})
			} else {
				return nil, false
			}
			i = j + 1
		default:
			if i != 0 {
				return nil, false
			}
			k, j := ident(i)
			out, i = append(out, pathSeg{key: k}), j
		}
	}
	return out, true
}

// lookupPath is the value at segs below v.
func lookupPath(v any, segs []pathSeg) (any, bool) {
	for _, s := range segs {
		switch {
		case s.isIndex:
			l, ok := v.([]any)
			if !ok || s.index < 0 || s.index >= len(l) {
				return nil, false
			}
			v = l[s.index]
		case s.isElement:
			l, ok := v.([]any)
			if !ok {
				return nil, false
			}
			found := false
			for _, e := range l {
				if m, ok := e.(map[string]any); ok {
					if id, has := m[s.matchKey]; has && fmt.Sprint(id) == s.key {
						v, found = e, true
						break
					}
				}
			}
			if !found {
				return nil, false
			}
		default:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[s.key]; !ok {
				return nil, false
			}
		}
	}
	return v, true
}

// valueLeaf is a leaf of the user values that differs from the deployed
// revision's: a scalar, a list whose length changed, or a structure added
// or removed whole... leaf by leaf.
type valueLeaf struct {
	path string // as plan.Leaves prints it: image.tag, hosts[0]
	segs []pathSeg
}

// changedLeaves are the leaves at which after differs from before: maps
// are walked key by key (an added or removed map leaf by leaf), lists of
// one length index by index; anything else that differs is one leaf.
func changedLeaves(before, after map[string]any) []valueLeaf {
	var out []valueLeaf
	var walk func(path string, segs []pathSeg, b any, hasB bool, a any, hasA bool)
	walk = func(path string, segs []pathSeg, b any, hasB bool, a any, hasA bool) {
		bm, bIsMap := b.(map[string]any)
		am, aIsMap := a.(map[string]any)
		if (bIsMap || !hasB) && (aIsMap || !hasA) && len(bm)+len(am) > 0 {
			keys := slices.Collect(maps.Keys(bm))
			for k := range am {
				if _, ok := bm[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				bv, bok := bm[k]
				av, aok := am[k]
				walk(plan.JoinKey(path, k), append(slices.Clip(segs), pathSeg{key: k}), bv, bok, av, aok)
			}
			return
		}
		bl, bIsList := b.([]any)
		al, aIsList := a.([]any)
		if hasB && hasA && bIsList && aIsList && len(bl) == len(al) {
			for i := range bl {
				walk(fmt.Sprintf("%s[%d]", path, i), append(slices.Clip(segs), pathSeg{index: i, isIndex: true}), bl[i], true, al[i], true)
			}
			return
		}
		if hasB && hasA && plan.EqualJSON(b, a) {
			return
		}
		out = append(out, valueLeaf{path: path, segs: segs})
	}
	walk("", nil, before, true, after, true)
	return out
}

// revert returns a copy of after with the leaf as before has it: its old
// value, or absent (with the maps that held only it and before lacks).
func (l valueLeaf) revert(after, before map[string]any) map[string]any {
	out := copyJSON(after).(map[string]any)
	if len(l.segs) == 0 {
		return copyJSON(before).(map[string]any)
	}
	old, had := lookupPath(before, l.segs)
	if had {
		setPath(out, l.segs, copyJSON(old))
		return out
	}
	last := l.segs[len(l.segs)-1]
	parent, ok := lookupPath(out, l.segs[:len(l.segs)-1])
	p, isMap := parent.(map[string]any)
	if !ok || !isMap {
		return out
	}
	delete(p, last.key)
	// Drop the maps the leaf alone made.
	for n := len(l.segs) - 1; n > 0; n-- {
		m, ok := lookupPath(out, l.segs[:n])
		if mm, isMap := m.(map[string]any); !ok || !isMap || len(mm) > 0 {
			break
		}
		if _, inBefore := lookupPath(before, l.segs[:n]); inBefore {
			break
		}
		gp, _ := lookupPath(out, l.segs[:n-1])
		g, isMap := gp.(map[string]any)
		if !isMap {
			break
		}
		delete(g, l.segs[n-1].key)
	}
	return out
}

// setPath sets the value at segs below root, making the maps missing on
// the way; a missing list element is left alone.
func setPath(root map[string]any, segs []pathSeg, v any) {
	var cur any = root
	for i, s := range segs {
		last := i == len(segs)-1
		switch t := cur.(type) {
		case map[string]any:
			if last {
				t[s.key] = v
				return
			}
			next, ok := t[s.key]
			if _, isMap := next.(map[string]any); !ok || (!isMap && !segs[i+1].isIndex) {
				next = map[string]any{}
				t[s.key] = next
			}
			cur = next
		case []any:
			if !s.isIndex || s.index >= len(t) {
				return
			}
			if last {
				t[s.index] = v
				return
			}
			cur = t[s.index]
		default:
			return
		}
	}
}
