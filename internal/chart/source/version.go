package source

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// pickVersion returns the highest of versions matching constraint, as Helm
// picks from an index: an exact string match first, then the highest
// version the constraint admits. Masterminds constraints admit pre-releases
// only when they name one ("^1.2.0-0"); "" means any release.
func pickVersion(constraint string, versions []string) (string, error) {
	if constraint != "" && slices.Contains(versions, constraint) {
		return constraint, nil
	}
	cons, err := semver.NewConstraint(cmp.Or(constraint, "*"))
	if err != nil {
		return "", fmt.Errorf("invalid version constraint %q: %w", constraint, err)
	}
	var best *semver.Version
	bestRaw := ""
	for _, v := range versions {
		sv, err := semver.NewVersion(v)
		if err != nil || !cons.Check(sv) {
			continue
		}
		if best == nil || sv.GreaterThan(best) {
			best, bestRaw = sv, v
		}
	}
	if best == nil {
		return "", fmt.Errorf("no version matches %s (available: %s)", describeConstraint(constraint), describeVersions(versions))
	}
	return bestRaw, nil
}

func describeConstraint(c string) string {
	if c == "" {
		return "any release version"
	}
	return fmt.Sprintf("the constraint %q", c)
}

// describeVersions lists versions newest first, at most 20.
func describeVersions(versions []string) string {
	if len(versions) == 0 {
		return "none"
	}
	vs := slices.Clone(versions)
	slices.SortFunc(vs, func(a, b string) int {
		va, ea := semver.NewVersion(a)
		vb, eb := semver.NewVersion(b)
		if ea != nil || eb != nil {
			return strings.Compare(b, a)
		}
		return vb.Compare(va)
	})
	if len(vs) > 20 {
		return strings.Join(vs[:20], ", ") + fmt.Sprintf(" and %d more", len(vs)-20)
	}
	return strings.Join(vs, ", ")
}

// ConstraintAdmits reports whether a locked version still satisfies the
// constraint written in the stack ("" admits every version).
func ConstraintAdmits(constraint, version string) bool {
	if constraint == "" || constraint == version {
		return true
	}
	cons, err := semver.NewConstraint(constraint)
	if err != nil {
		return false
	}
	v, err := semver.NewVersion(version)
	return err == nil && cons.Check(v)
}
