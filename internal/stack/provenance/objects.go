package provenance

import (
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// makeAt makes where a leaf is from the position of the key (or list
// element) that holds it and the expression written there.
type makeAt func(src *plan.Source, expr hcl.Expression) at

func plainAt(src *plan.Source, expr hcl.Expression) at { return at{src: src, via: expr} }

// objectIndex indexes the leaves of v, the value of expr at path: each
// at the key of the innermost item of a literal object (or element of a
// literal list) that holds it, else at cur. A value written as a
// reference to a local that is a literal object (local.common,
// local.common.image) is looked for in the local: the leaf stays where
// the reference is, and the local it read is narrowed to the item that
// holds the leaf.
func (b *builder) objectIndex(out map[string]at, expr hcl.Expression, v any, path string, cur at, mk makeAt) {
	switch e := expr.(type) {
	case *hclsyntax.ObjectConsExpr:
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 {
			break
		}
		done := map[string]bool{}
		for _, item := range e.Items {
			key, ok := literalKey(item.KeyExpr)
			if !ok {
				continue
			}
			child, ok := m[key]
			if !ok {
				continue
			}
			done[key] = true
			b.objectIndex(out, item.ValueExpr, child, joinKey(path, key), mk(b.source(item.KeyExpr.Range()), item.ValueExpr), mk)
		}
		for key, child := range m {
			if !done[key] {
				leavesAt(out, joinKey(path, key), child, cur)
			}
		}
		return
	case *hclsyntax.TupleConsExpr:
		list, ok := v.([]any)
		if !ok || len(list) == 0 || len(list) != len(e.Exprs) {
			break
		}
		for i, ex := range e.Exprs {
			b.objectIndex(out, ex, list[i], index(path, i), mk(b.source(ex.Range()), ex), mk)
		}
		return
	case *hclsyntax.ScopeTraversalExpr:
		if inner, name, ok := b.localObject(e); ok && cur.vias == nil {
			here := cur.src
			local := func(src *plan.Source, expr hcl.Expression) at {
				o := plan.Origin{Input: "local." + name, Kind: plan.OriginLocal, Source: src, Via: b.via(expr)}
				return at{src: here, vias: []plan.Origin{o}}
			}
			b.objectIndex(out, inner, v, path, local(b.source(b.src.Locals[name].DeclRange), inner), local)
			return
		}
	}
	leavesAt(out, path, v, cur)
}

// localObject is the literal object (or list) a reference to a local
// names: local.NAME, or an attribute of it written literally.
func (b *builder) localObject(e *hclsyntax.ScopeTraversalExpr) (hcl.Expression, string, bool) {
	trav := e.Traversal
	if b.src == nil || len(trav) < 2 || trav.RootName() != "local" {
		return nil, "", false
	}
	name, ok := trav[1].(hcl.TraverseAttr)
	if !ok || b.src.Locals[name.Name] == nil {
		return nil, "", false
	}
	expr := b.src.Locals[name.Name].Expr
	for _, step := range trav[2:] {
		var key string
		switch s := step.(type) {
		case hcl.TraverseAttr:
			key = s.Name
		case hcl.TraverseIndex:
			if s.Key.Type() != cty.String || !s.Key.IsKnown() || s.Key.IsNull() {
				return nil, "", false
			}
			key = s.Key.AsString()
		default:
			return nil, "", false
		}
		obj, ok := expr.(*hclsyntax.ObjectConsExpr)
		if !ok {
			return nil, "", false
		}
		found := false
		for _, item := range obj.Items {
			if k, ok := literalKey(item.KeyExpr); ok && k == key {
				expr, found = item.ValueExpr, true
			}
		}
		if !found {
			return nil, "", false
		}
	}
	switch expr.(type) {
	case *hclsyntax.ObjectConsExpr, *hclsyntax.TupleConsExpr:
		return expr, name.Name, true
	}
	return nil, "", false
}

// literalKey is an object key written as a name or a string.
func literalKey(expr hcl.Expression) (string, bool) {
	k, diags := expr.Value(nil)
	if diags.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
		return "", false
	}
	return k.AsString(), true
}
