package sensitive

import (
	"encoding/base64"
	"slices"
	"strings"
)

// Placeholder replaces masked values in every output.
const Placeholder = "(sensitive)"

// MinTextLen is the shortest sensitive string replaced wherever it occurs
// in text. Shorter ones ("1", "on") are masked only where a whole value
// equals them: replacing every "1" would garble the plan and protect
// nothing.
const MinTextLen = 3

// Redactor masks sensitive strings: whole values that equal one, and every
// occurrence in text, also base64-encoded (as in Secret data built with
// b64enc). The zero value and nil mask nothing. A Redactor is never
// modified once made, so it may be shared between goroutines.
type Redactor struct {
	exact map[string]bool
	// needles are replaced in text, longest first.
	needles []string
	// fields are the fields of objects rendered from sensitive values:
	// masked in diffs whatever their value.
	fields Fields
}

// New masks the given sensitive strings.
func New(values ...[]string) *Redactor {
	r := &Redactor{exact: map[string]bool{}}
	for _, vs := range values {
		for _, v := range vs {
			if v == "" {
				continue
			}
			r.exact[v] = true
			if len(v) >= MinTextLen {
				r.needles = append(r.needles, v, base64.StdEncoding.EncodeToString([]byte(v)))
			}
		}
	}
	slices.SortFunc(r.needles, func(a, b string) int { return len(b) - len(a) })
	r.needles = slices.Compact(r.needles)
	return r
}

// With returns a Redactor that masks what r masks and the strings more.
func (r *Redactor) With(more ...[]string) *Redactor {
	all := append([][]string{r.Values()}, more...)
	out := New(all...)
	if r != nil {
		out.fields = r.fields
	}
	return out
}

// WithFields returns a copy of r that also knows fields rendered from
// sensitive values.
func (r *Redactor) WithFields(f Fields) *Redactor {
	out := New(r.Values())
	out.fields = f
	return out
}

// Values are the sensitive strings r masks, sorted.
func (r *Redactor) Values() []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.exact))
	for v := range r.exact {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// Empty reports whether r masks nothing.
func (r *Redactor) Empty() bool { return r == nil || len(r.exact) == 0 }

// Is reports whether s is a sensitive string.
func (r *Redactor) Is(s string) bool { return r != nil && r.exact[s] }

// Needles are the strings r replaces in text (sensitive strings of at
// least MinTextLen characters and their base64 forms), longest first.
func (r *Redactor) Needles() []string {
	if r == nil {
		return nil
	}
	return r.needles
}

// Holds reports whether a value (scalar or structure) is or contains a
// sensitive string.
func (r *Redactor) Holds(v any) bool {
	if v == nil || r.Empty() {
		return false
	}
	switch t := v.(type) {
	case string:
		return r.exact[t] || r.contains(t)
	case map[string]any:
		for _, e := range t {
			if r.Holds(e) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if r.Holds(e) {
				return true
			}
		}
	}
	return false
}

func (r *Redactor) contains(s string) bool {
	for _, n := range r.needles {
		if strings.Contains(s, n) {
			return true
		}
	}
	return false
}

// Text replaces every occurrence of a sensitive string by Placeholder.
func (r *Redactor) Text(s string) string {
	if r == nil || len(r.needles) == 0 {
		return s
	}
	pairs := make([]string, 0, 2*len(r.needles))
	for _, n := range r.needles {
		pairs = append(pairs, n, Placeholder)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// Value masks the sensitive strings inside a JSON-like value; keys are
// never masked.
func (r *Redactor) Value(v any) any {
	switch t := v.(type) {
	case string:
		if r.Is(t) {
			return Placeholder
		}
		return r.Text(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = r.Value(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = r.Value(e)
		}
		return out
	}
	return v
}

// FieldsOf are the fields of an object rendered from sensitive values.
func (r *Redactor) FieldsOf(group, kind, namespace, name string) []string {
	if r == nil {
		return nil
	}
	return r.fields.Of(group, kind, namespace, name)
}
