package chart

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"github.com/Masterminds/semver/v3"
)

// ValidationError is a Chart.yaml problem, printed as Helm prints it.
type ValidationError string

func (v ValidationError) Error() string { return "validation: " + string(v) }

func validationErrorf(format string, args ...any) ValidationError {
	return ValidationError(fmt.Sprintf(format, args...))
}

var aliasNameFormat = regexp.MustCompile("^[a-zA-Z0-9_-]+$")

// validate checks Chart.yaml as Helm does, and sanitises its strings the
// same way (non-printable characters dropped, white space made plain).
func (md *Metadata) validate() error {
	md.Name = sanitize(md.Name)
	md.Description = sanitize(md.Description)
	md.Home = sanitize(md.Home)
	md.Icon = sanitize(md.Icon)
	md.Condition = sanitize(md.Condition)
	md.Tags = sanitize(md.Tags)
	md.AppVersion = sanitize(md.AppVersion)
	md.KubeVersion = sanitize(md.KubeVersion)
	for i := range md.Sources {
		md.Sources[i] = sanitize(md.Sources[i])
	}
	for i := range md.Keywords {
		md.Keywords[i] = sanitize(md.Keywords[i])
	}
	switch {
	case md.APIVersion == "":
		return ValidationError("chart.metadata.apiVersion is required")
	case md.Name == "":
		return ValidationError("chart.metadata.name is required")
	case md.Name == "." || md.Name == "..":
		return validationErrorf("chart.metadata.name %q is not allowed", md.Name)
	case md.Name != filepath.Base(md.Name):
		return validationErrorf("chart.metadata.name %q is invalid", md.Name)
	case md.Version == "":
		return ValidationError("chart.metadata.version is required")
	}
	if _, err := semver.NewVersion(md.Version); err != nil {
		return validationErrorf("chart.metadata.version %q is invalid", md.Version)
	}
	switch md.Type {
	case "", "application", "library":
	default:
		return ValidationError("chart.metadata.type must be application or library")
	}
	for _, m := range md.Maintainers {
		if m == nil {
			return ValidationError("maintainers must not contain empty or null nodes")
		}
		m.Name, m.Email, m.URL = sanitize(m.Name), sanitize(m.Email), sanitize(m.URL)
	}
	seen := map[string]bool{}
	for _, d := range md.Dependencies {
		if d == nil {
			return ValidationError("dependencies must not contain empty or null nodes")
		}
		d.Name, d.Version, d.Repository, d.Condition = sanitize(d.Name), sanitize(d.Version), sanitize(d.Repository), sanitize(d.Condition)
		for i := range d.Tags {
			d.Tags[i] = sanitize(d.Tags[i])
		}
		if d.Alias != "" && !aliasNameFormat.MatchString(d.Alias) {
			return validationErrorf("dependency %q has disallowed characters in the alias", d.Name)
		}
		key := d.Name
		if d.Alias != "" {
			key = d.Alias
		}
		if seen[key] {
			return validationErrorf("more than one dependency with name or alias %q", key)
		}
		seen[key] = true
	}
	return nil
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' '
		}
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, s)
}
