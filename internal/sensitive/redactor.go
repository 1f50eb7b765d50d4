package sensitive

import (
	"encoding/base64"
	"slices"
	"strings"
)

// Placeholder replaces masked values in every output.
const Placeholder = "(sensitive)"

// MinTextLen is the shortest sensitive string masked inside text. Shorter
// ones ("1", "on") are masked only where a whole value equals them:
// replacing every "1" would garble the plan and protect nothing.
const MinTextLen = 3

// MinSubstringLen is the shortest sensitive string masked wherever it
// occurs, even inside a longer word. A shorter one ("admin", grafana's
// default adminUser; "mess") is masked in text only where it stands as a
// word of its own — bounded by anything but letters, digits, '_', '-' and
// '.' — so that keys and names that merely contain it (adminPassword,
// data.admin-password, message) stay readable. Generated secrets are
// longer (bitnami's random passwords have 10 characters, helm's randAlphaNum
// calls in real charts 10 to 32); a short one is still masked where it is
// a whole value, in a URL (user:admin@host) or after "=" or ": ".
const MinSubstringLen = 8

// Redactor masks sensitive strings: whole values that equal one, and every
// occurrence in text, also base64-encoded (as in Secret data built with
// b64enc). The zero value and nil mask nothing. A Redactor is never
// modified once made, so it may be shared between goroutines.
type Redactor struct {
	exact map[string]bool
	// needles are replaced in text, longest first; words are the short
	// ones, replaced only where they stand as a word.
	needles []string
	words   map[string]bool
	// fields are the fields of objects rendered from sensitive values:
	// masked in diffs whatever their value.
	fields Fields
}

// New masks the given sensitive strings.
func New(values ...[]string) *Redactor {
	r := &Redactor{exact: map[string]bool{}, words: map[string]bool{}}
	for _, vs := range values {
		for _, v := range vs {
			if v == "" {
				continue
			}
			r.exact[v] = true
			if len(v) >= MinTextLen {
				b64 := base64.StdEncoding.EncodeToString([]byte(v))
				r.needles = append(r.needles, v, b64)
				if len(v) < MinSubstringLen {
					r.words[v], r.words[b64] = true, true
				}
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
		if r.words[n] {
			if wordIndex(s, n, 0) >= 0 {
				return true
			}
		} else if strings.Contains(s, n) {
			return true
		}
	}
	return false
}

// Text replaces every occurrence of a sensitive string by Placeholder
// (short ones only where they stand as a word: MinSubstringLen).
func (r *Redactor) Text(s string) string {
	if r == nil || len(r.needles) == 0 {
		return s
	}
	var pairs []string
	for _, n := range r.needles {
		if !r.words[n] {
			pairs = append(pairs, n, Placeholder)
		}
	}
	if len(pairs) > 0 {
		s = strings.NewReplacer(pairs...).Replace(s)
	}
	for _, n := range r.needles {
		if r.words[n] {
			s = replaceWords(s, n)
		}
	}
	return s
}

// Weak counts the sensitive strings masked in text only where they stand
// as a word (shorter than MinSubstringLen) or only as whole values
// (shorter than MinTextLen): worth a warning, never their text.
func (r *Redactor) Weak() int {
	if r == nil {
		return 0
	}
	n := 0
	for v := range r.exact {
		if len(v) < MinSubstringLen {
			n++
		}
	}
	return n
}

// wordChar reports whether c continues a word: a key or name that merely
// contains a short sensitive string (adminPassword, admin-password,
// admin.user, admin_user) is not masked.
func wordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// wordIndex is the index of the first occurrence of w in s at or after
// from that stands as a word, or -1.
func wordIndex(s, w string, from int) int {
	for from <= len(s)-len(w) {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(w)
		if (i == 0 || !wordChar(s[i-1])) && (end == len(s) || !wordChar(s[end])) {
			return i
		}
		from = i + 1
	}
	return -1
}

// replaceWords replaces the occurrences of w that stand as a word.
func replaceWords(s, w string) string {
	var b strings.Builder
	last := 0
	for i := wordIndex(s, w, 0); i >= 0; i = wordIndex(s, w, last) {
		b.WriteString(s[last:i])
		b.WriteString(Placeholder)
		last = i + len(w)
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
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
