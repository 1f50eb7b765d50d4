package source

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Newest is what a repository offers a release locked at some version.
// Each field is a version as published ("" when there is none).
type Newest struct {
	// Wanted is the newest version the release's constraint admits.
	Wanted string
	// Patch, Minor and Major are the newest versions with the locked
	// version's major and minor, with its major, and of any major.
	Patch, Minor, Major string
}

// Candidate reports whether a published version takes part in "newest":
// MAJOR.MINOR.PATCH (a leading v allowed), and a pre-release only when
// pre is set. Tags such as latest, main, nightly-2024-01-01 or a bare
// date (20240101, which loose semver reads as major 20240101) never do.
func Candidate(version string, pre bool) (*semver.Version, bool) {
	sv, err := semver.StrictNewVersion(strings.TrimPrefix(version, "v"))
	if err != nil {
		return nil, false
	}
	if sv.Prerelease() != "" && !pre {
		return nil, false
	}
	return sv, true
}

// NamesPrerelease reports whether a constraint names a pre-release
// version ("^2.0.0-0", ">= 1.0.0-rc.1"): only then are pre-releases
// candidates, as Masterminds constraints admit them only then.
func NamesPrerelease(constraint string) bool {
	for _, f := range strings.FieldsFunc(constraint, func(r rune) bool { return r == ' ' || r == ',' || r == '|' }) {
		f = strings.TrimLeft(f, "=<>!~^v")
		if sv, err := semver.NewVersion(f); err == nil && sv.Prerelease() != "" {
			return true
		}
	}
	return false
}

// NewestVersions finds, among versions, the newest the constraint admits
// and the newest patch, minor and major relative to locked (relative to
// the wanted version when nothing is locked). An invalid constraint is an
// error; no candidate at all is not.
func NewestVersions(constraint, locked string, versions []ChartVersion) (Newest, error) {
	var cons *semver.Constraints
	if constraint != "" {
		c, err := semver.NewConstraint(constraint)
		if err != nil {
			return Newest{}, fmt.Errorf("invalid version constraint %q: %w", constraint, err)
		}
		cons = c
	}
	pre := NamesPrerelease(constraint)
	type cand struct {
		sv  *semver.Version
		raw string
	}
	var cands []cand
	for _, v := range versions {
		if sv, ok := Candidate(v.Version, pre); ok {
			cands = append(cands, cand{sv, v.Version})
		}
	}
	newest := func(keep func(*semver.Version) bool) string {
		var best *cand
		for i := range cands {
			c := &cands[i]
			if keep(c.sv) && (best == nil || c.sv.GreaterThan(best.sv)) {
				best = c
			}
		}
		if best == nil {
			return ""
		}
		return best.raw
	}
	var out Newest
	if constraint != "" {
		for _, c := range cands {
			if c.raw == constraint {
				out.Wanted = constraint
			}
		}
	}
	if out.Wanted == "" {
		out.Wanted = newest(func(v *semver.Version) bool { return cons == nil || cons.Check(v) })
	}
	base, err := semver.NewVersion(strings.TrimPrefix(cmp.Or(locked, out.Wanted), "v"))
	out.Major = newest(func(*semver.Version) bool { return true })
	if err != nil {
		return out, nil
	}
	out.Minor = newest(func(v *semver.Version) bool { return v.Major() == base.Major() })
	out.Patch = newest(func(v *semver.Version) bool { return v.Major() == base.Major() && v.Minor() == base.Minor() })
	return out, nil
}

// Newer reports whether version a is a newer version than b (both as
// published; "" is never newer, and anything parseable is newer than "").
func Newer(a, b string) bool {
	va, err := semver.NewVersion(strings.TrimPrefix(a, "v"))
	if err != nil || a == "" {
		return false
	}
	vb, err := semver.NewVersion(strings.TrimPrefix(b, "v"))
	if err != nil {
		return true
	}
	return va.GreaterThan(vb)
}

// BumpConstraint rewrites a version constraint so that it admits target,
// keeping its shape: an exact version becomes target; one operator and
// one version ("^1.2.0", "~1.2", ">=1.0.0") keeps the operator and the
// number of components; a wildcard ("1.2.x", "1.*") keeps its precision.
// A constraint that already admits target is returned unchanged, and ""
// admits everything. Ranges and alternatives ("> 1, < 2", "1.x || 2.x")
// are not rewritten: an error says to edit them by hand.
func BumpConstraint(constraint, target string) (string, error) {
	tv, err := semver.NewVersion(strings.TrimPrefix(target, "v"))
	if err != nil {
		return "", fmt.Errorf("%q is not a version", target)
	}
	if ConstraintAdmits(constraint, target) {
		return constraint, nil
	}
	c := strings.TrimSpace(constraint)
	if strings.ContainsAny(c, ",|") || strings.Contains(c, " - ") || len(strings.Fields(c)) > 1 && !isOperator(strings.Fields(c)[0]) {
		return "", fmt.Errorf("the constraint %q is a range: edit it by hand", constraint)
	}
	op := ""
	for _, o := range []string{">=", "<=", "~>", "!=", "=", ">", "<", "~", "^"} {
		if strings.HasPrefix(c, o) {
			op = o
			break
		}
	}
	rest := strings.TrimSpace(strings.TrimPrefix(c, op))
	switch op {
	case "<", "<=", "!=":
		return "", fmt.Errorf("the constraint %q caps the version: edit it by hand", constraint)
	}
	v := ""
	if strings.HasPrefix(rest, "v") {
		v, rest = "v", rest[1:]
	}
	parts := strings.Split(rest, ".")
	nums := []uint64{tv.Major(), tv.Minor(), tv.Patch()}
	out := make([]string, 0, len(parts))
	for i, p := range parts {
		switch {
		case i >= 3:
			return "", fmt.Errorf("the constraint %q is not a version: edit it by hand", constraint)
		case p == "x" || p == "X" || p == "*":
			out = append(out, p)
		case i == 2 && len(parts) == 3 && !isNumber(p):
			// 1.2.3-rc.1 or 1.2.3+meta: the target's whole version.
			return op + v + target, nil
		default:
			out = append(out, fmt.Sprint(nums[i]))
		}
	}
	if len(parts) == 3 && op != "" || len(parts) == 3 && !strings.ContainsAny(rest, "xX*") {
		// A whole version: the target's own, pre-release and all.
		return op + v + strings.TrimPrefix(target, "v"), nil
	}
	bumped := op + v + strings.Join(out, ".")
	if !ConstraintAdmits(bumped, target) {
		return "", fmt.Errorf("the constraint %q cannot be rewritten to admit %s: edit it by hand", constraint, target)
	}
	return bumped, nil
}

func isOperator(s string) bool { return strings.Trim(s, "<>=!~^") == "" }

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
