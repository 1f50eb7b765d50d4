package config

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// manifestFiles expands manifests = ["k8s/*.yaml", ...]: globs relative to
// the stack directory, which the files may not leave (they are read like
// file()). Each pattern must match a file; the result is in name order
// without repeats.
func (e *evaluator) manifestFiles(val cty.Value, expr hcl.Expression) ([]string, hcl.Diagnostics) {
	bad := func(detail string) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid manifests",
			Detail: detail + ` For example: manifests = ["k8s/*.yaml"]`, Subject: expr.Range().Ptr()}}
	}
	if val.ContainsMarked() || !val.IsWhollyKnown() {
		return nil, bad("manifests must be known before apply and not sensitive.")
	}
	list, err := convert.Convert(val, cty.List(cty.String))
	if err != nil || list.IsNull() || list.LengthInt() == 0 {
		return nil, bad("manifests is a non-empty list of file paths or globs relative to the stack directory.")
	}
	var out []string
	for _, v := range list.AsValueSlice() {
		pattern := filepath.Clean(v.AsString())
		if filepath.IsAbs(pattern) || pattern == ".." || len(pattern) > 2 && pattern[:3] == ".."+string(filepath.Separator) {
			return nil, bad(fmt.Sprintf("%q leaves the stack directory: manifests are files inside it.", v.AsString()))
		}
		matches, err := filepath.Glob(filepath.Join(e.cfg.Dir, pattern))
		if err != nil {
			return nil, bad(fmt.Sprintf("%q is not a valid glob: %v.", v.AsString(), err))
		}
		n := 0
		for _, m := range matches {
			rel, err := filepath.Rel(e.cfg.Dir, m)
			if err != nil {
				continue
			}
			st, err := stackDir(e.cfg.Dir).Stat(rel)
			if err != nil {
				return nil, bad(fileArgError(err, nil, e.root != "").Error() + ".")
			}
			if st.IsDir() {
				continue
			}
			n++
			if !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
		if n == 0 {
			return nil, bad(fmt.Sprintf("%q matches no file in the stack directory.", v.AsString()))
		}
	}
	slices.Sort(out)
	return out, nil
}
