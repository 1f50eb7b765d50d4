package resolve

import (
	"fmt"
	"slices"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/zclconf/go-cty/cty"
)

// SensitiveValues returns the exact strings of every value of r marked
// sensitive (sensitive variables, set_sensitive, anything derived from
// them), sorted and without repeats: plan masks every occurrence of them in
// what it prints. A sensitive YAML values layer contributes every scalar it
// holds. Numbers contribute their decimal form; booleans nothing (masking
// every "true" would hide everything and protect nothing).
func SensitiveValues(r *config.ReleaseInstance) []string {
	var out []string
	for _, l := range r.Values {
		if l.Kind == config.ValuesYAML {
			text, marks := l.Value.Unmark()
			if _, ok := marks[config.Sensitive]; ok && text.IsKnown() && !text.IsNull() && text.Type() == cty.String {
				if m, err := chart.ParseValues([]byte(text.AsString())); err == nil {
					out = appendScalars(out, m)
				}
				out = append(out, text.AsString())
				continue
			}
		}
		out = collectSensitive(out, l.Value, false)
	}
	for _, v := range r.Set {
		out = collectSensitive(out, v, false)
	}
	for _, v := range r.SetSensitive {
		out = collectSensitive(out, v, true)
	}
	slices.Sort(out)
	return slices.Compact(slices.DeleteFunc(out, func(s string) bool { return s == "" }))
}

func collectSensitive(out []string, v cty.Value, inherited bool) []string {
	v, marks := v.Unmark()
	_, marked := marks[config.Sensitive]
	sensitive := inherited || marked
	if !v.IsKnown() || v.IsNull() {
		return out
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		if sensitive {
			out = append(out, v.AsString())
		}
	case ty == cty.Number:
		if sensitive {
			out = append(out, v.AsBigFloat().Text('f', -1))
		}
	case ty.IsObjectType() || ty.IsMapType() || ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			out = collectSensitive(out, ev, sensitive)
		}
	}
	return out
}

// appendScalars appends every string and number leaf of a decoded value.
func appendScalars(out []string, v any) []string {
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			out = appendScalars(out, e)
		}
	case []any:
		for _, e := range t {
			out = appendScalars(out, e)
		}
	case string:
		out = append(out, t)
	case int64, float64, int:
		out = append(out, fmt.Sprint(t))
	}
	return out
}
