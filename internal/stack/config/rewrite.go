package config

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// SetReleaseVersions rewrites the version attribute of release blocks in
// one stack file's source (src, named filename in diagnostics): versions
// maps a release block's name to its new constraint. Only the attribute's
// string changes; comments, blank lines and the file's own layout (odd
// spacing included) are kept byte for byte. A release whose version is not
// a literal string (a variable, a template with interpolations) is not
// rewritten: its diagnostic points at the attribute. Releases not in the
// file are ignored.
func SetReleaseVersions(src []byte, filename string, versions map[string]string) ([]byte, hcl.Diagnostics) {
	syn, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	// hclwrite formats the whole file it writes; only the attribute's
	// tokens are taken from it, spliced into the source at the range the
	// syntax tree gives, so nothing else moves.
	type edit struct {
		rng hcl.Range
		to  []byte
	}
	var edits []edit
	for _, b := range syn.Body.(*hclsyntax.Body).Blocks {
		if b.Type != "release" || len(b.Labels) != 1 {
			continue
		}
		to, want := versions[b.Labels[0]]
		a, ok := b.Body.Attributes["version"]
		if !want || !ok {
			continue
		}
		if t, ok := a.Expr.(*hclsyntax.TemplateExpr); ok && t.IsStringLiteral() {
			edits = append(edits, edit{a.Expr.Range(), hclwrite.TokensForValue(cty.StringVal(to)).Bytes()})
			continue
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Version is not a literal string",
			Detail:   fmt.Sprintf("release %q's version is an expression; convoy rewrites only a quoted version constraint. Set it to %q by hand.", b.Labels[0], to),
			Subject:  a.Expr.Range().Ptr(),
		})
	}
	out := slices.Clone(src)
	for _, e := range slices.Backward(edits) {
		out = slices.Replace(out, e.rng.Start.Byte, e.rng.End.Byte, e.to...)
	}
	return out, diags
}
