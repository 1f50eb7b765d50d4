package plan

import (
	"regexp"

	"github.com/convoy-sh/convoy/internal/sensitive"
)

// SensitivePlaceholder replaces masked values in every output.
const SensitivePlaceholder = sensitive.Placeholder

// Redactor masks the sensitive values of every release of the plan.
func (p *Plan) Redactor() *sensitive.Redactor { return p.RedactorWith() }

// RedactorWith is Redactor, masking also the strings more: the sensitive
// values of a release known only when it is applied.
func (p *Plan) RedactorWith(more ...[]string) *sensitive.Redactor {
	var all [][]string
	if p != nil {
		for _, r := range p.Releases {
			all = append(all, r.Sensitive)
		}
	}
	return sensitive.New(append(all, more...)...)
}

// RedactError masks the sensitive values of every release of the plan in
// err's message.
func (p *Plan) RedactError(err error) error {
	if p == nil {
		return err
	}
	return p.Redactor().Err(err)
}

// MaskDiff masks changes holding sensitive strings, and every change at,
// under or above one of secretPaths (a created object's "data" holds
// "data.token").
func MaskDiff(d *Diff, r *sensitive.Redactor, secretPaths ...string) {
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

// MaskValues masks a values diff: sensitive strings, and keys named like
// secrets.
func MaskValues(d *Diff, r *sensitive.Redactor) {
	d.Mask(func(c *Change) bool {
		return secretLooking.MatchString(c.Path) || r.Holds(c.Before) || r.Holds(c.After)
	})
}
