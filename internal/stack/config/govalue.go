package config

import (
	"errors"
	"fmt"
	"math/big"

	ctyyaml "github.com/zclconf/go-cty-yaml"
	"github.com/zclconf/go-cty/cty"
)

// ErrUnknownValue is returned by GoValue for values known only after apply.
var ErrUnknownValue = errors.New("value is not known until apply")

// Placeholders used by DisplayValue.
const (
	SensitivePlaceholder = "(sensitive value)"
	UnknownPlaceholder   = "(known after apply)"
)

// GoValue converts a cty value (marks allowed) into the plain Go values a
// chart engine works with, as YAML decoding would produce them:
// map[string]interface{}, []interface{}, string, bool, int64 for whole
// numbers that fit, float64 otherwise, and nil. sensitive reports whether any
// part of the value was marked Sensitive. Unknown values are an error
// wrapping ErrUnknownValue: re-evaluate the release once its dependencies are
// applied.
func GoValue(v cty.Value) (val interface{}, sensitive bool, err error) {
	var c goConverter
	val, err = c.convert(v, cty.Path{})
	return val, c.sensitive, err
}

// DisplayValue converts like GoValue, but replaces sensitive parts with
// SensitivePlaceholder and unknown parts with UnknownPlaceholder: for plans,
// JSON output and logs.
func DisplayValue(v cty.Value) interface{} {
	c := goConverter{display: true}
	val, _ := c.convert(v, cty.Path{})
	return val
}

// Go decodes the layer into a map: YAML text is parsed, objects converted.
// sensitive reports whether the layer held sensitive values.
func (l ValuesLayer) Go() (values map[string]interface{}, sensitive bool, err error) {
	v := l.Value
	if l.Kind == ValuesYAML {
		text, marks := v.Unmark()
		if !text.IsKnown() {
			return nil, false, ErrUnknownValue
		}
		decoded, err := ctyyaml.Unmarshal([]byte(text.AsString()), cty.DynamicPseudoType)
		if err != nil {
			return nil, false, fmt.Errorf("values YAML: %w", err)
		}
		if err := limitNodes(decoded); err != nil {
			return nil, false, fmt.Errorf("values YAML: %w", err)
		}
		v = decoded.WithMarks(marks)
	}
	out, sensitive, err := GoValue(v)
	if err != nil || out == nil {
		return map[string]interface{}{}, sensitive, err
	}
	m, ok := out.(map[string]interface{})
	if !ok {
		return nil, sensitive, fmt.Errorf("values layer is %T, not a mapping", out)
	}
	return m, sensitive, nil
}

type goConverter struct {
	display   bool
	sensitive bool
}

func (c *goConverter) convert(v cty.Value, path cty.Path) (interface{}, error) {
	v, marks := v.Unmark()
	if _, ok := marks[Sensitive]; ok {
		c.sensitive = true
		if c.display {
			return SensitivePlaceholder, nil
		}
	}
	if !v.IsKnown() {
		if c.display {
			return UnknownPlaceholder, nil
		}
		return nil, fmt.Errorf("%s: %w", formatPath(path), ErrUnknownValue)
	}
	if v.IsNull() {
		return nil, nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString(), nil
	case ty == cty.Bool:
		return v.True(), nil
	case ty == cty.Number:
		return goNumber(v.AsBigFloat()), nil
	case ty.IsObjectType() || ty.IsMapType():
		out := map[string]interface{}{}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			gv, err := c.convert(ev, path.GetAttr(k.AsString()))
			if err != nil {
				return nil, err
			}
			out[k.AsString()] = gv
		}
		return out, nil
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		out := make([]interface{}, 0, v.LengthInt())
		i := int64(0)
		for it := v.ElementIterator(); it.Next(); i++ {
			_, ev := it.Element()
			gv, err := c.convert(ev, path.IndexInt(int(i)))
			if err != nil {
				return nil, err
			}
			out = append(out, gv)
		}
		return out, nil
	case ty.IsCapsuleType():
		return nil, fmt.Errorf("%s: cannot convert %s", formatPath(path), ty.FriendlyName())
	}
	return nil, fmt.Errorf("%s: cannot convert %s", formatPath(path), ty.FriendlyName())
}

func goNumber(bf *big.Float) interface{} {
	if bf.IsInt() {
		if i, acc := bf.Int64(); acc == big.Exact {
			return i
		}
	}
	f, _ := bf.Float64()
	return f
}

func formatPath(p cty.Path) string {
	if len(p) == 0 {
		return "value"
	}
	s := ""
	for _, step := range p {
		switch st := step.(type) {
		case cty.GetAttrStep:
			if s != "" {
				s += "."
			}
			s += st.Name
		case cty.IndexStep:
			if st.Key.Type() == cty.Number {
				bf := st.Key.AsBigFloat()
				s += "[" + bf.Text('f', 0) + "]"
			} else {
				s += fmt.Sprintf("[%q]", st.Key.AsString())
			}
		}
	}
	return s
}
