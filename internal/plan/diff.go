package plan

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/convoy-sh/convoy/internal/textdiff"
)

// FieldOp is the kind of one field change.
type FieldOp string

// Field operations, rendered as "+", "-" and "~".
const (
	FieldAdd    FieldOp = "add"
	FieldRemove FieldOp = "remove"
	FieldChange FieldOp = "change"
)

// Diff is a precomputed field-level diff: the leaves that differ, in a
// stable order (map keys sorted, list elements in order).
type Diff struct {
	Changes []*Change
}

// Change is one field's change. Path reads like `spec.replicas`,
// `data["app.conf"]` or `spec.template.spec.containers[name=web].image`:
// list elements are addressed by their identity key when they have one.
type Change struct {
	Path string
	Op   FieldOp
	// Before and After are the old and new values (absent for add and
	// remove respectively). Masked values are SensitivePlaceholder.
	Before any `json:",omitempty"`
	After  any `json:",omitempty"`
	// Sensitive: Before and After are masked.
	Sensitive bool `json:",omitempty"`
	// Lines is a unified diff (lines starting with ' ', '-' or '+') when
	// either side is a multi-line string.
	Lines []string `json:",omitempty"`
	// Manager is the field manager that wrote the live value, when it is
	// not convoy's (kubectl, a controller): in an object's change, apply
	// takes the field over from it; in drift, it changed the field.
	Manager string `json:",omitempty"`
	// Provenance are the inputs that changed the field: in an object's
	// diff, the values leaves, chart or drift whose revert alone reverts
	// it (internal/plan/planner, provenance.go); in the values diff, where the
	// leaf is set. Empty when no input the plan knows explains it (the
	// revision number, a lookup) or attribution was skipped
	// (ReleaseChange.Attribution says why).
	Provenance []Origin `json:",omitempty"`
	// ProvenanceJoint: no single input's revert changes the field; the
	// inputs of Provenance, reverted together, do.
	ProvenanceJoint bool `json:",omitempty"`
}

// Empty reports whether d has no changes.
func (d *Diff) Empty() bool { return d == nil || len(d.Changes) == 0 }

// Compare diffs two JSON-like values (maps, lists, scalars as decoded from
// JSON or YAML). It returns nil when they are equal.
func Compare(before, after any) *Diff {
	d := &Diff{}
	d.compare("", before, after, true, true)
	if len(d.Changes) == 0 {
		return nil
	}
	return d
}

func (d *Diff) compare(path string, before, after any, hasBefore, hasAfter bool) {
	switch {
	case !hasBefore && !hasAfter:
		return
	case !hasBefore:
		d.Changes = append(d.Changes, &Change{Path: path, Op: FieldAdd, After: after})
		return
	case !hasAfter:
		d.Changes = append(d.Changes, &Change{Path: path, Op: FieldRemove, Before: before})
		return
	}
	bm, bIsMap := before.(map[string]any)
	am, aIsMap := after.(map[string]any)
	if bIsMap && aIsMap {
		keys := slices.Sorted(maps.Keys(bm))
		for k := range am {
			if _, ok := bm[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			bv, bok := bm[k]
			av, aok := am[k]
			d.compare(JoinKey(path, k), bv, av, bok, aok)
		}
		return
	}
	bl, bIsList := before.([]any)
	al, aIsList := after.([]any)
	if bIsList && aIsList {
		d.compareLists(path, bl, al)
		return
	}
	if EqualJSON(before, after) {
		return
	}
	c := &Change{Path: path, Op: FieldChange, Before: before, After: after}
	bs, _ := before.(string)
	as, _ := after.(string)
	if strings.Contains(bs, "\n") || strings.Contains(as, "\n") {
		c.Lines = unifiedLines(bs, as)
	}
	d.Changes = append(d.Changes, c)
}

// identityKeys are the fields that identify list elements, in preference
// order (containers, env, volumes by name; ports by number; mounts by path).
var identityKeys = []string{"name", "mountPath", "containerPort", "port", "key", "ip"}

func (d *Diff) compareLists(path string, before, after []any) {
	if key := listKey(before, after); key != "" {
		bi, ai := indexBy(before, key), indexBy(after, key)
		var ids []string
		seen := map[string]bool{}
		for _, l := range [][]any{before, after} {
			for _, e := range l {
				id := idOf(e, key)
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
		for _, id := range ids {
			bv, bok := bi[id]
			av, aok := ai[id]
			d.compare(fmt.Sprintf("%s[%s=%s]", path, key, id), bv, av, bok, aok)
		}
		return
	}
	if len(before) == len(after) {
		for i := range before {
			d.compare(fmt.Sprintf("%s[%d]", path, i), before[i], after[i], true, true)
		}
		return
	}
	if !EqualJSON(before, after) {
		d.Changes = append(d.Changes, &Change{Path: path, Op: FieldChange, Before: before, After: after})
	}
}

// listKey is the identity key every element of both lists has, with
// distinct values, or "".
func listKey(lists ...[]any) string {
	for _, key := range identityKeys {
		ok := true
		for _, l := range lists {
			seen := map[string]bool{}
			for _, e := range l {
				m, isMap := e.(map[string]any)
				if !isMap {
					ok = false
					break
				}
				v, has := m[key]
				if !has {
					ok = false
					break
				}
				id := fmt.Sprint(v)
				if seen[id] {
					ok = false
					break
				}
				seen[id] = true
			}
			if !ok {
				break
			}
		}
		if ok && (len(lists[0]) > 0 || len(lists[1]) > 0) {
			return key
		}
	}
	return ""
}

func idOf(e any, key string) string { return fmt.Sprint(e.(map[string]any)[key]) }

func indexBy(l []any, key string) map[string]any {
	m := make(map[string]any, len(l))
	for _, e := range l {
		m[idOf(e, key)] = e
	}
	return m
}

// JoinKey appends a map key to a path as plans print paths: plain
// identifiers with a dot, others quoted in brackets (`a.b`, `a["b.c"]`).
func JoinKey(path, k string) string {
	if isIdent(k) {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	return path + "[" + strconv.Quote(k) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'):
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// equalJSON compares values as JSON would: 3 (int64) equals 3.0 (float64).
// EqualJSON reports whether a and b are equal as JSON values (numbers of
// different Go types compare by their JSON form).
func EqualJSON(a, b any) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// Mask replaces the values of changes for which sensitive returns true by
// SensitivePlaceholder, and drops their line diffs. An added or removed
// structure is masked leaf by leaf: one sensitive leaf hides that leaf only.
func (d *Diff) Mask(sensitive func(c *Change) bool) {
	if d == nil {
		return
	}
	d.splitSensitive(sensitive)
	for _, c := range d.Changes {
		if c.Sensitive || !sensitive(c) {
			continue
		}
		c.Sensitive = true
		c.Lines = nil
		if c.Op != FieldAdd {
			c.Before = SensitivePlaceholder
		}
		if c.Op != FieldRemove {
			c.After = SensitivePlaceholder
		}
	}
}

// HasPrefix reports whether path is prefix itself or a field below it.
func HasPrefix(path, prefix string) bool {
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	rest := path[len(prefix):]
	return rest == "" || rest[0] == '.' || rest[0] == '['
}

// unifiedLines is a line diff of two texts: every line prefixed by ' ',
// '-' or '+', unchanged runs longer than 6 lines shortened to 3 lines of
// context on each side.
func unifiedLines(a, b string) []string {
	var ops []string
	for _, o := range textdiff.Lines(a, b, 4<<20) {
		ops = append(ops, string(o.Kind)+o.Line)
	}
	return trimContext(ops, 3)
}

// trimContext keeps ctx unchanged lines around each change and replaces
// longer unchanged runs by one "@@ ... @@" line.
func trimContext(ops []string, ctx int) []string {
	keep := make([]bool, len(ops))
	for i, op := range ops {
		if op[0] != ' ' {
			for k := max(0, i-ctx); k <= min(len(ops)-1, i+ctx); k++ {
				keep[k] = true
			}
		}
	}
	var out []string
	skipped := 0
	for i, op := range ops {
		if keep[i] {
			if skipped > 0 {
				out = append(out, fmt.Sprintf("@@ %d unchanged lines @@", skipped))
				skipped = 0
			}
			out = append(out, op)
			continue
		}
		skipped++
	}
	if skipped > 0 {
		out = append(out, fmt.Sprintf("@@ %d unchanged lines @@", skipped))
	}
	return out
}
