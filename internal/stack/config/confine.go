package config

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Confinement (EvalOptions.Root): in the controller, a stack is a pulled
// artifact of someone else's, and the controller's own files (its
// kubeconfig, its service account's token, other stacks in its cache) are
// not the stack's to read. With a root, every path the stack names must
// lead inside it: file functions take relative paths only (which already
// may not leave the stack directory), local charts and repository files
// must lie under the root once symlinks are followed, and no program is
// run (post_renderer).

// confinedDetail ends the message of a path refused by confinement.
const confinedDetail = "the controller reads only the files of the pulled stack artifact"

// confinePath refuses, when root is set, a path argument that is absolute
// or in the home directory. Relative paths are left to the stack
// directory's own check (safefile).
func confinePath(root, p string, marks cty.ValueMarks) error {
	if root == "" || !isHostPath(p) {
		return nil
	}
	if len(marks) > 0 {
		p = SensitivePlaceholder
	}
	return fmt.Errorf("%s is an absolute path: %s; give a path relative to the stack directory", p, confinedDetail)
}

// isHostPath is an absolute or home-directory path.
func isHostPath(p string) bool {
	return filepath.IsAbs(p) || p == "~" || strings.HasPrefix(p, "~/")
}

// insideRoot checks that path (relative to dir, the stack directory)
// leads inside root, symlinks followed.
func insideRoot(root, dir, p string) error {
	if isHostPath(p) {
		return fmt.Errorf("%s is an absolute path: %s", p, confinedDetail)
	}
	abs, err := filepath.Abs(filepath.Join(dir, p))
	if err != nil {
		return err
	}
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if r, err := filepath.EvalSymlinks(rootAbs); err == nil {
		rootAbs = r
	}
	target := abs
	if t, err := filepath.EvalSymlinks(abs); err == nil {
		target = t
	} else if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		// Missing: where its directory leads.
		target = filepath.Join(d, filepath.Base(abs))
	}
	rel, err := filepath.Rel(rootAbs, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		if target != abs {
			return fmt.Errorf("%s leads to %s, outside the stack artifact: %s", p, target, confinedDetail)
		}
		return fmt.Errorf("%s is outside the stack artifact: %s", p, confinedDetail)
	}
	return nil
}

// confinedDiag is the diagnostic of a path refused by confinement, at the
// expression that names it.
func confinedDiag(attr string, expr hcl.Expression, err error) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid " + attr,
		Detail:   err.Error() + ".",
		Subject:  expr.Range().Ptr(),
	}
}
