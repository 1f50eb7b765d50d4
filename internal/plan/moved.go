package plan

import (
	"fmt"
)

// ActionForget: a removed block with destroy = false. The stack stops
// managing the release: apply takes the stack's label off its records
// and writes no revision; its objects and Helm release stay.
const ActionForget Action = "forget"

// ReasonForget is why a release is forgotten.
const ReasonForget ReasonKind = "forget"

// MoveLine is what a plan says of a moved release:
// "release.old has moved to release.new".
func (r *ReleaseChange) MoveLine() string {
	if r.MovedFrom == nil {
		return ""
	}
	return fmt.Sprintf("%s has moved to %s", r.MovedFrom, r.Addr)
}

// ForgetLine is what a plan of stack (as printed: quoted) says of a
// forgotten release.
func (r *ReleaseChange) ForgetLine(stack string) string {
	return fmt.Sprintf("%s will no longer be managed by stack %s; its objects and Helm release stay", r.removedName(), stack)
}

// removedName is the address a removed block gave the release, or its
// removed address.
func (r *ReleaseChange) removedName() string {
	if r.RemovedFrom != nil {
		return r.RemovedFrom.String()
	}
	return r.Addr.String()
}

// Moved returns the releases of the plan that moved blocks moved.
func (p *Plan) Moved() []*ReleaseChange {
	var out []*ReleaseChange
	for _, r := range p.Releases {
		if r.MovedFrom != nil {
			out = append(out, r)
		}
	}
	return out
}
