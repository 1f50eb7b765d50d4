package stack

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
)

// stripCachePaths rewrites the paths of pulled stacks in a message as the
// user wrote them: …/stacks/sha256-…/tree/app/stack.hcl:3,1-5 becomes
// stack.hcl:3,1-5, relative to the stack directory (a chart packed beside
// it is ../charts/api).
func (r *reconciler) stripCachePaths(msg string) string {
	stacksDir, _, _ := r.dirs()
	return stripStackPaths(msg, stacksDir)
}

func stripStackPaths(msg, stacksDir string) string {
	prefix := filepath.ToSlash(stacksDir)
	if !strings.Contains(msg, prefix) {
		return msg
	}
	re := regexp.MustCompile(regexp.QuoteMeta(prefix) + `/(sha256-[0-9a-f]+)/tree/`)
	var b strings.Builder
	for {
		loc := re.FindStringSubmatchIndex(msg)
		if loc == nil {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:loc[0]])
		rest := msg[loc[1]:]
		stackPath := "."
		if sp, err := os.ReadFile(filepath.Join(stacksDir, msg[loc[2]:loc[3]], "stack-path")); err == nil {
			stackPath = path.Clean(string(sp))
		}
		switch {
		case stackPath == ".":
		case strings.HasPrefix(rest, stackPath+"/"):
			rest = rest[len(stackPath)+1:]
		default:
			rest = strings.Repeat("../", strings.Count(stackPath, "/")+1) + rest
		}
		msg = rest
	}
}

// stripStatusPaths strips the cache paths from the status's messages.
func (r *reconciler) stripStatusPaths(st *v1alpha1.Stack) {
	st.Status.LastError = r.stripCachePaths(st.Status.LastError)
	for i := range st.Status.Conditions {
		st.Status.Conditions[i].Message = r.stripCachePaths(st.Status.Conditions[i].Message)
	}
}
