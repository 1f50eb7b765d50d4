package plan

import (
	"encoding/base64"
	"regexp"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/kube"
)

// minRedactLen is the shortest sensitive string replaced wherever it occurs
// in output text. Shorter ones ("1", "on") are masked only where a whole
// value equals them: replacing every "1" would garble the plan and protect
// nothing.
const minRedactLen = 3

// Redactor masks sensitive strings: whole diff leaves that hold one, and
// every occurrence in output text, also base64-encoded (as in Secret data
// built with b64enc).
type Redactor struct {
	exact map[string]bool
	// needles are replaced in text, longest first.
	needles []string
	// fields are the fields of a release's objects rendered from sensitive
	// values (derived.go): masked in diffs whatever their value.
	fields derivedFields
}

// NewRedactor masks the given sensitive strings.
func NewRedactor(values ...[]string) *Redactor {
	r := &Redactor{exact: map[string]bool{}}
	for _, vs := range values {
		for _, v := range vs {
			if v == "" {
				continue
			}
			r.exact[v] = true
			if len(v) >= minRedactLen {
				r.needles = append(r.needles, v, base64.StdEncoding.EncodeToString([]byte(v)))
			}
		}
	}
	slices.SortFunc(r.needles, func(a, b string) int { return len(b) - len(a) })
	r.needles = slices.Compact(r.needles)
	return r
}

// holds reports whether a value (scalar or structure) contains a sensitive
// string.
func (r *Redactor) Holds(v any) bool {
	if v == nil || (len(r.exact) == 0) {
		return false
	}
	if s, ok := v.(string); ok {
		if r.exact[s] {
			return true
		}
		return r.contains(s)
	}
	switch t := v.(type) {
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

// text replaces every occurrence of a sensitive string.
func (r *Redactor) Text(s string) string {
	if len(r.needles) == 0 {
		return s
	}
	pairs := make([]string, 0, 2*len(r.needles))
	for _, n := range r.needles {
		pairs = append(pairs, n, SensitivePlaceholder)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// value masks sensitive strings inside a JSON-like value (not its keys).
func (r *Redactor) Value(v any) any {
	switch t := v.(type) {
	case string:
		if r.exact[t] {
			return SensitivePlaceholder
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

// err masks an error's message; errors.Is/As still see the original.
func (r *Redactor) Err(err error) error {
	if err == nil || len(r.needles) == 0 {
		return err
	}
	msg := r.Text(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// RedactError masks the sensitive values of every release of the plan in
// err's message.
func (p *Plan) RedactError(err error) error {
	if p == nil {
		return err
	}
	return p.Redactor().Err(err)
}

// Redactor masks the sensitive values of every release of the plan.
func (p *Plan) Redactor() *Redactor { return p.RedactorWith() }

// RedactorWith is Redactor, masking also the strings more: the sensitive
// values of a release known only when it is applied.
func (p *Plan) RedactorWith(more ...[]string) *Redactor {
	var all [][]string
	for _, r := range p.Releases {
		all = append(all, r.Sensitive)
	}
	return NewRedactor(append(all, more...)...)
}

// fieldsOf are the fields of the object ref rendered from sensitive values.
func (r *Redactor) fieldsOf(ref kube.Ref) []string { return r.fields.of(ref) }

// maskDiff masks changes holding sensitive strings, and every change at,
// under or above one of secretPaths (a created object's "data" holds
// "data.token").
func MaskDiff(d *Diff, r *Redactor, secretPaths ...string) {
	d.Mask(func(c *Change) bool {
		for _, p := range secretPaths {
			if HasPrefix(c.Path, p) || HasPrefix(p, c.Path) {
				return true
			}
		}
		return r.Holds(c.Before) || r.Holds(c.After)
	})
}

// secretLooking matches values paths whose name says they hold a secret.
// Values the stack no longer marks sensitive (a removed set_sensitive) are
// not known as such, but the old revision's value is in the diff: masking
// by name is the last line of defence for the values diff.
var secretLooking = regexp.MustCompile(`(?i)(password|passwd|secret|token|api[_-]?key|private[_-]?key|credential)`)

// maskValues masks a values diff: sensitive strings, and keys named like
// secrets.
func MaskValues(d *Diff, r *Redactor) {
	d.Mask(func(c *Change) bool {
		return secretLooking.MatchString(c.Path) || r.Holds(c.Before) || r.Holds(c.After)
	})
}
