package run

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Validate loads the stack and checks, offline, what the charts say about
// it: a local chart path that is not a chart, values that break a chart's
// values.schema.json (local charts, and repository charts in the chart
// cache), and set or set_sensitive values Helm's --set cannot take. Each
// problem is a diagnostic at the attribute it comes from. Charts not yet
// fetched (convoy init) and values known only after apply are not checked.
// The error is a *DiagnosticsError when the stack is at fault.
func (s *Session) Validate(ctx context.Context) (*Loaded, error) {
	ls, err := s.loaded(true)
	if err != nil {
		return s.ls, err
	}
	o := s.o
	charts := o.charts()
	var diags hcl.Diagnostics
	for _, addr := range ls.Order {
		if err := ctx.Err(); err != nil {
			return ls, err
		}
		inst := ls.Stack.Release(addr)
		blk := ls.Config.Releases[addr.Release.Name]
		if blk == nil {
			continue
		}
		diags = append(diags, validateRelease(charts, ls.Stack, inst, blk)...)
	}
	if err := diagError(append(ls.Warnings, diags...), ls.Config); err != nil {
		return ls, err
	}
	ls.Warnings = append(ls.Warnings, diags...)
	return ls, nil
}

func validateRelease(charts *resolve.Charts, st *config.Stack, inst *config.ReleaseInstance, blk *config.Release) hcl.Diagnostics {
	dir := st.Dir
	var diags hcl.Diagnostics
	setOK := true
	for _, set := range []struct {
		attr string
		expr hcl.Expression
		vals map[string]cty.Value
	}{{"set", blk.Set, inst.Set}, {"set_sensitive", blk.SetSensitive, inst.SetSensitive}} {
		for _, path := range slices.Sorted(maps.Keys(set.vals)) {
			v := set.vals[path]
			if !v.IsWhollyKnown() {
				continue
			}
			if err := resolve.CheckSet(path, v); err != nil {
				setOK = false
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid " + set.attr + " value",
					Detail:   fmt.Sprintf("%s: %s %q: %v.", inst.Addr, set.attr, path, err),
					Subject:  itemRange(set.expr, path).Ptr(),
				})
			}
		}
	}

	ch, err := charts.Load(dir, inst)
	if err != nil {
		if inst.ChartSource == config.ChartLocal {
			if why := notAChart(dir, inst.Chart); why != nil {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Not a chart",
					Detail:   fmt.Sprintf("%s: chart %q is not a chart that convoy can load: %v.", inst.Addr, inst.Chart, why),
					Subject:  exprRange(blk.Chart, blk.DeclRange).Ptr(),
				})
			}
		}
		// Otherwise a chart or dependency not fetched yet: convoy init.
		return diags
	}
	if !inst.Known || !setOK {
		return diags
	}
	values, sensitive, err := resolve.Values(inst)
	if err != nil {
		return diags // reported by evaluation, or known only after apply
	}
	var se *chart.SchemaError
	if err := chart.ValidateValues(ch, values); errors.As(err, &se) {
		diags = append(diags, schemaDiagnostics(st, inst, blk, ch, values, se, sensitive)...)
	}
	return diags
}

// quoted are the values a schema message quotes, hidden when the release
// has sensitive values.
var quoted = regexp.MustCompile(`'[^']*'`)

func exprRange(expr hcl.Expression, fallback hcl.Range) hcl.Range {
	if expr == nil {
		return fallback
	}
	return expr.Range()
}

// itemRange is the range of the item of an object expression whose key is
// key (a set path), else of the whole expression.
func itemRange(expr hcl.Expression, key string) hcl.Range {
	obj, ok := expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return expr.Range()
	}
	for _, item := range obj.Items {
		k, diags := item.KeyExpr.Value(nil)
		if diags.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
			continue
		}
		if k.AsString() == key {
			return hcl.RangeBetween(item.KeyExpr.Range(), item.ValueExpr.Range())
		}
	}
	return expr.Range()
}

// notAChart says why a local chart path is not a chart, or nil when it
// loads (its dependencies may still need convoy init).
func notAChart(dir, chartPath string) error {
	path, err := config.ResolvePath(dir, chartPath)
	if err != nil {
		return err
	}
	_, err = chart.Load(path)
	return err
}
