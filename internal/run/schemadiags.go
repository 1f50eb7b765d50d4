package run

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	yaml "go.yaml.in/yaml/v3"
)

// schemaDiagnostics are a release's values.schema.json violations, each at
// what sets the failing value (valueSource): the key's line in a values
// file, the item of a values object or of set / set_sensitive. A violation
// nothing the release sets explains (a chart default, a key missing at the
// top) is at the values attribute.
func schemaDiagnostics(inst *config.ReleaseInstance, blk *config.Release, se *chart.SchemaError, sensitive bool) hcl.Diagnostics {
	fallback := exprRange(blk.Values, blk.DeclRange)
	if blk.Values == nil && blk.Set != nil {
		fallback = blk.Set.Range()
	}
	mask := func(s string) string {
		if sensitive {
			return quoted.ReplaceAllString(s, "'(sensitive)'")
		}
		return s
	}
	if len(se.Violations) == 0 {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Values break the chart's schema",
			Detail:   fmt.Sprintf("%s: the values do not meet the chart's values.schema.json:\n%s", inst.Addr, mask(strings.TrimSpace(se.Message))),
			Subject:  &fallback,
		}}
	}
	var diags hcl.Diagnostics
	for _, v := range se.Violations {
		subject, ok := valueSource(inst, blk, v.Path)
		if !ok {
			subject = fallback
		}
		where := "the values"
		if len(v.Path) > 0 {
			where = setPath(v.Path)
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Values break the chart's schema",
			Detail:   fmt.Sprintf("%s: the values do not meet the chart's values.schema.json: %s (schema of chart %s): %s.", inst.Addr, where, v.Chart, mask(v.Message)),
			Subject:  &subject,
		})
	}
	return diags
}

// valueSource is the range of what sets the value at path in a release's
// values, looked for as they are merged, the last word first:
// set_sensitive, set, then the values layers from the last. A layer written
// as file(PATH) points at the key's line in that file, unless the text is
// sensitive (the snippet would show the line).
func valueSource(inst *config.ReleaseInstance, blk *config.Release, path []string) (hcl.Range, bool) {
	if len(path) == 0 {
		return hcl.Range{}, false
	}
	key := setPath(path)
	for _, s := range []struct {
		vals map[string]cty.Value
		expr hcl.Expression
	}{{inst.SetSensitive, blk.SetSensitive}, {inst.Set, blk.Set}} {
		for _, k := range slices.Sorted(maps.Keys(s.vals)) {
			if s.expr != nil && (k == key || strings.HasPrefix(k, key+".") || strings.HasPrefix(k, key+"[")) {
				return itemRange(s.expr, k), true
			}
		}
	}
	for i := len(inst.Values) - 1; i >= 0; i-- {
		if rng, ok := layerSource(inst.Values[i], layerExpr(blk.Values, inst.Values[i].Range), path); ok {
			return rng, true
		}
	}
	return hcl.Range{}, false
}

// setPath writes a values path as Helm's --set does: keys joined by ".",
// list indices in brackets, dots in keys escaped.
func setPath(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if _, err := strconv.Atoi(p); err == nil && i > 0 {
			b.WriteString("[" + p + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strings.ReplaceAll(p, ".", `\.`))
	}
	return b.String()
}

// layerExpr is the element of the values list written at rng, nil when
// the list is not written literally.
func layerExpr(values hcl.Expression, rng hcl.Range) hcl.Expression {
	tup, ok := values.(*hclsyntax.TupleConsExpr)
	if !ok {
		return nil
	}
	for _, ex := range tup.Exprs {
		if ex.Range() == rng {
			return ex
		}
	}
	return nil
}

// layerSource is the range of the value at path in one values layer, and
// whether the layer sets it.
func layerSource(l config.ValuesLayer, expr hcl.Expression, path []string) (hcl.Range, bool) {
	if l.Kind == config.ValuesYAML {
		text, marks := l.Value.Unmark()
		if !text.IsKnown() || text.IsNull() {
			return hcl.Range{}, false
		}
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(text.AsString()), &doc); err != nil {
			return hcl.Range{}, false
		}
		n := yamlAt(&doc, path)
		if n == nil {
			return hcl.Range{}, false
		}
		if l.File == "" || len(marks) > 0 {
			return l.Range, true
		}
		return yamlLineRange(l.File, text.AsString(), n), true
	}
	v, _ := l.Value.UnmarkDeep()
	if !ctyHas(v, path) {
		return hcl.Range{}, false
	}
	if obj, ok := expr.(*hclsyntax.ObjectConsExpr); ok {
		return hclItemRange(obj, path), true
	}
	return l.Range, true
}

// yamlAt is the node (the key of a mapping entry, the item of a
// sequence) at path in a YAML document, nil when there is none.
func yamlAt(doc *yaml.Node, path []string) *yaml.Node {
	n := doc
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	var at *yaml.Node
	for _, p := range path {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		switch n.Kind {
		case yaml.MappingNode:
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == p {
					at, n, found = n.Content[i], n.Content[i+1], true
					break
				}
			}
			if !found {
				return nil
			}
		case yaml.SequenceNode:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(n.Content) {
				return nil
			}
			at, n = n.Content[i], n.Content[i]
		default:
			return nil
		}
	}
	return at
}

// yamlLineRange is the range in file (whose text is text) from node to
// the end of its line.
func yamlLineRange(file, text string, n *yaml.Node) hcl.Range {
	lineStart := 0
	for line := 1; line < n.Line; line++ {
		i := strings.IndexByte(text[lineStart:], '\n')
		if i < 0 {
			break
		}
		lineStart += i + 1
	}
	lineText := text[lineStart:]
	if i := strings.IndexByte(lineText, '\n'); i >= 0 {
		lineText = lineText[:i]
	}
	lineText = strings.TrimRight(lineText, " \t\r")
	start := 0
	for col := 1; col < n.Column && start < len(lineText); col++ {
		_, size := utf8.DecodeRuneInString(lineText[start:])
		start += size
	}
	return hcl.Range{
		Filename: file,
		Start:    hcl.Pos{Line: n.Line, Column: n.Column, Byte: lineStart + start},
		End:      hcl.Pos{Line: n.Line, Column: n.Column + utf8.RuneCountInString(lineText[start:]), Byte: lineStart + len(lineText)},
	}
}

// ctyHas says whether v has a value at path.
func ctyHas(v cty.Value, path []string) bool {
	for _, p := range path {
		if v.IsNull() || !v.IsKnown() {
			return false
		}
		ty := v.Type()
		switch {
		case ty.IsObjectType():
			if !ty.HasAttribute(p) {
				return false
			}
			v = v.GetAttr(p)
		case ty.IsMapType():
			k := cty.StringVal(p)
			if !v.HasIndex(k).True() {
				return false
			}
			v = v.Index(k)
		case ty.IsListType() || ty.IsTupleType():
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= v.LengthInt() {
				return false
			}
			v = v.Index(cty.NumberIntVal(int64(i)))
		default:
			return false
		}
	}
	return true
}

// hclItemRange is the range of the deepest item of a literal object
// expression on path: the item itself when the path ends in it, else the
// item whose value is not written literally.
func hclItemRange(obj *hclsyntax.ObjectConsExpr, path []string) hcl.Range {
	var expr hclsyntax.Expression = obj
	rng := obj.Range()
	for _, p := range path {
		switch e := expr.(type) {
		case *hclsyntax.ObjectConsExpr:
			found := false
			for _, item := range e.Items {
				k, diags := item.KeyExpr.Value(nil)
				if diags.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String || k.AsString() != p {
					continue
				}
				rng = hcl.RangeBetween(item.KeyExpr.Range(), item.ValueExpr.Range())
				expr, found = item.ValueExpr, true
				break
			}
			if !found {
				return rng
			}
		case *hclsyntax.TupleConsExpr:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(e.Exprs) {
				return rng
			}
			expr = e.Exprs[i]
			rng = expr.Range()
		default:
			return rng
		}
	}
	return rng
}
