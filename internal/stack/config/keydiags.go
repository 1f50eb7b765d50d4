package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// maxNamedKeys bounds the keys a diagnostic lists.
const maxNamedKeys = 30

// nameKeys rewrites HCL's "Invalid index" and "Unsupported attribute"
// diagnostics on objects and maps so that they name the key asked for and
// the keys there are: HCL's own text only says the key is missing, and the
// diagnostic writer describes the value as "object with 7 attributes".
func nameKeys(diags hcl.Diagnostics) hcl.Diagnostics {
	for _, d := range diags {
		if d.Severity != hcl.DiagError || d.Subject == nil || d.Expression == nil || d.EvalContext == nil {
			continue
		}
		if d.Summary != "Invalid index" && d.Summary != "Unsupported attribute" {
			continue
		}
		coll, key, what, ok := failedLookup(d.Expression, d.EvalContext, *d.Subject)
		if !ok {
			continue
		}
		coll, _ = coll.Unmark()
		if !coll.IsKnown() || coll.IsNull() {
			continue
		}
		ty := coll.Type()
		if !ty.IsObjectType() && !ty.IsMapType() {
			continue
		}
		keys := keysOf(coll)
		d.Detail = fmt.Sprintf("%s has no key %q; %s.", what, key, describeKeys(keys))
	}
	return diags
}

// failedLookup finds, in expr, the index or attribute step at subject and
// returns the value it was applied to, the key asked for and the source
// text of the looked-up value.
func failedLookup(expr hcl.Expression, ctx *hcl.EvalContext, subject hcl.Range) (cty.Value, string, string, bool) {
	switch e := expr.(type) {
	case *hclsyntax.IndexExpr:
		coll, d := e.Collection.Value(ctx)
		if d.HasErrors() {
			return cty.NilVal, "", "", false
		}
		k, d := e.Key.Value(ctx)
		if d.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
			return cty.NilVal, "", "", false
		}
		return coll, k.AsString(), exprText(e.Collection), true
	case *hclsyntax.ScopeTraversalExpr:
		for i, step := range e.Traversal {
			if i == 0 || step.SourceRange() != subject {
				continue
			}
			coll, d := e.Traversal[:i].TraverseAbs(ctx)
			return stepLookup(coll, d, step, traversalText(e.Traversal[:i]))
		}
	case *hclsyntax.RelativeTraversalExpr:
		for i, step := range e.Traversal {
			if step.SourceRange() != subject {
				continue
			}
			src, d := e.Source.Value(ctx)
			if d.HasErrors() {
				return cty.NilVal, "", "", false
			}
			coll, d := e.Traversal[:i].TraverseRel(src)
			what := "this value"
			if src := exprText(e.Source); src != what {
				what = src + traversalText(e.Traversal[:i])
			}
			return stepLookup(coll, d, step, what)
		}
	}
	return cty.NilVal, "", "", false
}

func stepLookup(coll cty.Value, d hcl.Diagnostics, step hcl.Traverser, what string) (cty.Value, string, string, bool) {
	if d.HasErrors() {
		return cty.NilVal, "", "", false
	}
	switch s := step.(type) {
	case hcl.TraverseAttr:
		return coll, s.Name, what, true
	case hcl.TraverseIndex:
		if s.Key.Type() == cty.String && s.Key.IsKnown() && !s.Key.IsNull() {
			return coll, s.Key.AsString(), what, true
		}
	}
	return cty.NilVal, "", "", false
}

// exprText names expr as written when it is a traversal, else "this value".
func exprText(expr hclsyntax.Expression) string {
	if t, ok := expr.(*hclsyntax.ScopeTraversalExpr); ok {
		return traversalText(t.Traversal)
	}
	return "this value"
}

// traversalText writes t as HCL: release.db.resources["v1/Secret/a"].
func traversalText(t hcl.Traversal) string {
	var b strings.Builder
	for _, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			switch {
			case !s.Key.IsKnown() || s.Key.IsNull():
				b.WriteString("[?]")
			case s.Key.Type() == cty.String:
				fmt.Fprintf(&b, "[%q]", s.Key.AsString())
			case s.Key.Type() == cty.Number:
				b.WriteString("[" + s.Key.AsBigFloat().Text('f', -1) + "]")
			default:
				b.WriteString("[?]")
			}
		case hcl.TraverseSplat:
			b.WriteString("[*]")
		}
	}
	return b.String()
}

func keysOf(v cty.Value) []string {
	var keys []string
	if v.Type().IsObjectType() {
		for k := range v.Type().AttributeTypes() {
			keys = append(keys, k)
		}
	} else if v.LengthInt() > 0 {
		for it := v.ElementIterator(); it.Next(); {
			k, _ := it.Element()
			keys = append(keys, k.AsString())
		}
	}
	sort.Strings(keys)
	return keys
}

func describeKeys(keys []string) string {
	if len(keys) == 0 {
		return "it has no keys"
	}
	quoted := make([]string, 0, len(keys))
	for i, k := range keys {
		if i == maxNamedKeys {
			quoted = append(quoted, fmt.Sprintf("and %d more", len(keys)-maxNamedKeys))
			break
		}
		quoted = append(quoted, fmt.Sprintf("%q", k))
	}
	return "its keys are " + strings.Join(quoted, ", ")
}
