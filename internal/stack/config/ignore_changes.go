package config

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// IgnoreChange is one element of a release's ignore_changes: fields of the
// objects of Kind whose name matches Name that the release leaves to other
// field managers (an autoscaler's replicas). They are neither applied nor
// reported as drift.
type IgnoreChange struct {
	Kind string
	// Name is a glob (path.Match syntax); "*" when not given.
	Name string
	// Paths are the JSON pointers as written ("/spec/replicas") and
	// PathTokens the same pointers parsed (RFC 6901), in the same order.
	Paths      []string
	PathTokens [][]string
}

// ignoreChangesExample is shown in every diagnostic about the attribute.
const ignoreChangesExample = `ignore_changes = [{ kind = "Deployment", name = "*", paths = ["/spec/replicas"] }]`

// ignoreChanges reads ignore_changes: a list of objects with kind
// (required), name (a glob, "*" by default) and paths (JSON pointers).
// Diagnostics point at the offending element or attribute when the
// expression is written out literally, else at the whole attribute.
func ignoreChanges(val cty.Value, expr hcl.Expression) ([]IgnoreChange, hcl.Diagnostics) {
	const attr = "ignore_changes"
	bad := func(rng hcl.Range, summary, detail string) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail + " For example: " + ignoreChangesExample, Subject: rng.Ptr()}}
	}
	if val.IsMarked() {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Sensitive value not allowed",
			Detail:   fmt.Sprintf("%q cannot be sensitive: it is shown in plans.", attr),
			Subject:  expr.Range().Ptr(),
		}}
	}
	if !val.IsWhollyKnown() {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Value known only after apply",
			Detail:   fmt.Sprintf("%q must be known before apply, but it depends on a release attribute (revision, status or resources) that is known only after apply.", attr),
			Subject:  expr.Range().Ptr(),
		}}
	}
	if val.IsNull() {
		return nil, nil
	}
	ty := val.Type()
	if !ty.IsTupleType() && !ty.IsListType() && !ty.IsSetType() {
		return nil, bad(expr.Range(), "Invalid ignore_changes", fmt.Sprintf("ignore_changes must be a list of objects, not %s.", ty.FriendlyName()))
	}
	elemExprs := literalList(expr, val.LengthInt())
	var out []IgnoreChange
	var diags hcl.Diagnostics
	i := 0
	for it := val.ElementIterator(); it.Next(); i++ {
		_, elem := it.Element()
		rng := expr.Range()
		var elemExpr hcl.Expression
		if elemExprs != nil {
			elemExpr = elemExprs[i]
			rng = elemExpr.Range()
		}
		ic, d := ignoreChange(elem, elemExpr, rng, bad)
		diags = append(diags, d...)
		if !d.HasErrors() {
			out = append(out, ic)
		}
	}
	return out, diags
}

func ignoreChange(elem cty.Value, expr hcl.Expression, rng hcl.Range, bad func(hcl.Range, string, string) hcl.Diagnostics) (IgnoreChange, hcl.Diagnostics) {
	ety := elem.Type()
	if elem.IsNull() || (!ety.IsObjectType() && !ety.IsMapType()) {
		return IgnoreChange{}, bad(rng, "Invalid ignore_changes element", "Each element of ignore_changes must be an object with kind, paths and optionally name.")
	}
	attrs := literalAttrs(expr)
	at := func(name string) hcl.Range {
		if e, ok := attrs[name]; ok {
			return e.Range()
		}
		return rng
	}
	values := elem.AsValueMap()
	var diags hcl.Diagnostics
	for _, k := range sortedKeys(values) {
		if k != "kind" && k != "name" && k != "paths" {
			diags = append(diags, bad(at(k), "Unsupported ignore_changes attribute", fmt.Sprintf("%q is not an attribute of an ignore_changes element: use kind, name and paths.", k))...)
		}
	}
	str := func(name string) (string, bool) {
		v, ok := values[name]
		if !ok || v.IsNull() {
			return "", false
		}
		if v.Type() != cty.String {
			diags = append(diags, bad(at(name), "Invalid ignore_changes "+name, fmt.Sprintf("%s must be a string, not %s.", name, v.Type().FriendlyName()))...)
			return "", false
		}
		return v.AsString(), true
	}
	ic := IgnoreChange{Name: "*"}
	if kind, ok := str("kind"); !ok || kind == "" {
		if !diags.HasErrors() {
			diags = append(diags, bad(at("kind"), "Missing kind in ignore_changes", "Each element of ignore_changes needs the kind of the objects it applies to, such as \"Deployment\".")...)
		}
	} else {
		ic.Kind = kind
	}
	if name, ok := str("name"); ok {
		if _, err := path.Match(name, ""); err != nil || name == "" {
			diags = append(diags, bad(at("name"), "Invalid ignore_changes name", fmt.Sprintf("%q is not a name pattern: use a name or a glob such as \"api-*\" (\"*\" for every object of the kind).", name))...)
		} else {
			ic.Name = name
		}
	}
	paths, ok := values["paths"]
	pty := paths.Type()
	switch {
	case !ok || paths.IsNull():
		diags = append(diags, bad(at("paths"), "Missing paths in ignore_changes", "Each element of ignore_changes needs paths: the JSON pointers of the fields to leave to others.")...)
		return ic, diags
	case (!pty.IsTupleType() && !pty.IsListType() && !pty.IsSetType()) || paths.LengthInt() == 0:
		diags = append(diags, bad(at("paths"), "Invalid ignore_changes paths", "paths must be a non-empty list of JSON pointers.")...)
		return ic, diags
	}
	pathExprs := literalList(attrs["paths"], paths.LengthInt())
	j := 0
	for it := paths.ElementIterator(); it.Next(); j++ {
		_, p := it.Element()
		prng := at("paths")
		if pathExprs != nil {
			prng = pathExprs[j].Range()
		}
		if p.IsNull() || p.Type() != cty.String {
			diags = append(diags, bad(prng, "Invalid ignore_changes path", "Each path must be a JSON pointer string such as \"/spec/replicas\".")...)
			continue
		}
		toks, err := parsePointer(p.AsString())
		if err != nil {
			diags = append(diags, bad(prng, "Invalid ignore_changes path", err.Error()+".")...)
			continue
		}
		ic.Paths = append(ic.Paths, p.AsString())
		ic.PathTokens = append(ic.PathTokens, toks)
	}
	return ic, diags
}

// parsePointer parses a JSON pointer (RFC 6901) into its reference tokens,
// refusing the whole document and the object's identity, which apply
// always sets.
func parsePointer(s string) ([]string, error) {
	if s == "" || s[0] != '/' {
		return nil, fmt.Errorf("%q is not a JSON pointer: it must start with \"/\", as in \"/spec/replicas\"", s)
	}
	var toks []string
	for _, tok := range strings.Split(s[1:], "/") {
		for i := 0; i < len(tok); i++ {
			if tok[i] == '~' && (i+1 == len(tok) || (tok[i+1] != '0' && tok[i+1] != '1')) {
				return nil, fmt.Errorf("%q is not a JSON pointer: write \"~\" as ~0 and \"/\" as ~1 in a key, as in \"/metadata/annotations/example.com~1owner\"", s)
			}
		}
		toks = append(toks, strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~"))
	}
	switch {
	case len(toks) == 1 && slices.Contains([]string{"apiVersion", "kind", "metadata"}, toks[0]),
		len(toks) == 2 && toks[0] == "metadata" && (toks[1] == "name" || toks[1] == "namespace"):
		return nil, fmt.Errorf("%q is part of the object's identity, which apply always sets", s)
	}
	return toks, nil
}

// literalList returns the element expressions of a list written out
// literally with n elements, or nil.
func literalList(expr hcl.Expression, n int) []hcl.Expression {
	if expr == nil {
		return nil
	}
	exprs, diags := hcl.ExprList(expr)
	if diags.HasErrors() || len(exprs) != n {
		return nil
	}
	return exprs
}

// literalAttrs returns the value expressions of an object written out
// literally, by key, or nil.
func literalAttrs(expr hcl.Expression) map[string]hcl.Expression {
	if expr == nil {
		return nil
	}
	pairs, diags := hcl.ExprMap(expr)
	if diags.HasErrors() {
		return nil
	}
	out := map[string]hcl.Expression{}
	for _, kv := range pairs {
		if k := hcl.ExprAsKeyword(kv.Key); k != "" {
			out[k] = kv.Value
			continue
		}
		if v, d := kv.Key.Value(nil); !d.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
			out[v.AsString()] = kv.Value
		}
	}
	return out
}
