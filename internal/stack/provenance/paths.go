package provenance

import (
	"strconv"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
)

// Paths are written as plan.Leaves writes them: identifiers joined with
// ".", other keys quoted in brackets, list indexes in brackets.

// seg is the path of a single key at the top.
func seg(k string) string { return joinKey("", k) }

// joinKey appends a map key to a path, as plan.Leaves does.
func joinKey(path, k string) string { return plan.JoinKey(path, k) }

// index appends a list index to a path.
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// join appends a relative path (as written below the top) to a path.
func join(prefix, rest string) string {
	switch {
	case prefix == "":
		return rest
	case rest == "":
		return prefix
	case rest[0] == '[':
		return prefix + rest
	}
	return prefix + "." + rest
}

// under says whether path is at or below the path key (one or more
// segments), and what of it is below.
func under(path, key string) (string, bool) {
	if key == "" {
		return path, true
	}
	if !strings.HasPrefix(path, key) {
		return "", false
	}
	rest := path[len(key):]
	switch {
	case rest == "":
		return "", true
	case rest[0] == '.':
		return rest[1:], true
	case rest[0] == '[':
		return rest, true
	}
	return "", false
}

// dotted is a dotted path as Chart.yaml's import-values write it
// ("exports.data"), as a path; "." is the top.
func dotted(p string) string {
	if p == "." || p == "" {
		return ""
	}
	out := ""
	for _, k := range strings.Split(p, ".") {
		out = joinKey(out, k)
	}
	return out
}
