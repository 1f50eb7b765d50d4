package config

import (
	"fmt"
	"regexp"
	"strconv"

	ctyyaml "github.com/zclconf/go-cty-yaml"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Limits on what single function calls may build. Stack files are bounded
// in size and nesting (see load.go), but a few functions can turn a short
// call into gigabytes: YAML alias bombs, cartesian products, huge format
// widths and indents. Those calls fail with an error instead.
const (
	maxDecodedNodes = 1_000_000 // values in a yamldecode result, aliases expanded
	maxProduct      = 100_000   // elements of a setproduct result
	maxFormatWidth  = 10_000    // width or precision in a format verb
	maxIndentBytes  = 16 << 20  // bytes indent may add
)

// guard wraps f so that check runs on the arguments before f does.
func guard(f function.Function, check func(args []cty.Value) error) function.Function {
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type: func(args []cty.Value) (cty.Type, error) {
			return f.ReturnTypeForValues(args)
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if err := check(args); err != nil {
				return cty.DynamicVal, err
			}
			return f.Call(args)
		},
	})
}

// limitYAMLInput fails when the YAML text in args[0] would decode to more
// than maxDecodedNodes values. It walks the implied type, which YAML
// aliases share rather than copy, so the walk is cheap while the count
// reflects what consumers will expand; the walk stops at the limit.
func limitYAMLInput(args []cty.Value) error {
	src, _ := args[0].Unmark()
	if !src.IsKnown() || src.IsNull() || src.Type() != cty.String {
		return nil
	}
	ty, err := ctyyaml.ImpliedType([]byte(src.AsString()))
	if err != nil {
		return nil // the decode function reports it
	}
	n := 0
	var walk func(t cty.Type) bool
	walk = func(t cty.Type) bool {
		n++
		if n > maxDecodedNodes {
			return false
		}
		switch {
		case t.IsObjectType():
			for _, at := range t.AttributeTypes() {
				if !walk(at) {
					return false
				}
			}
		case t.IsTupleType():
			for _, et := range t.TupleElementTypes() {
				if !walk(et) {
					return false
				}
			}
		case t.IsCollectionType():
			return walk(t.ElementType())
		}
		return true
	}
	if !walk(ty) {
		return fmt.Errorf("the YAML would decode to more than %d values (aliases are expanded)", maxDecodedNodes)
	}
	return nil
}

// limitNodes fails when v has more than maxDecodedNodes values, counting
// shared (aliased) parts every time they appear, as consumers will.
func limitNodes(v cty.Value) error {
	n := 0
	var walk func(v cty.Value) bool
	walk = func(v cty.Value) bool {
		n++
		if n > maxDecodedNodes {
			return false
		}
		v, _ = v.Unmark()
		if !v.IsKnown() || v.IsNull() || !v.CanIterateElements() {
			return true
		}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if !walk(e) {
				return false
			}
		}
		return true
	}
	if !walk(v) {
		return fmt.Errorf("the decoded value has more than %d elements (YAML aliases are expanded)", maxDecodedNodes)
	}
	return nil
}

func limitProduct(args []cty.Value) error {
	total := 1
	for _, a := range args {
		a, _ = a.Unmark()
		if !a.IsKnown() || a.IsNull() || !a.CanIterateElements() {
			continue
		}
		total *= max(1, a.LengthInt())
		if total > maxProduct {
			return fmt.Errorf("the product would have more than %d elements", maxProduct)
		}
	}
	return nil
}

var formatWidth = regexp.MustCompile(`%[-+# 0]*(\[\d+\])?(\d*)(?:\.(\d*))?`)

func limitFormatWidth(args []cty.Value) error {
	if len(args) == 0 {
		return nil
	}
	f, _ := args[0].Unmark()
	if !f.IsKnown() || f.IsNull() || f.Type() != cty.String {
		return nil
	}
	for _, m := range formatWidth.FindAllStringSubmatch(f.AsString(), -1) {
		for _, num := range m[2:] {
			if num == "" {
				continue
			}
			if n, err := strconv.Atoi(num); err != nil || n > maxFormatWidth {
				return fmt.Errorf("format widths and precisions may be at most %d", maxFormatWidth)
			}
		}
	}
	return nil
}

func limitIndent(args []cty.Value) error {
	spaces, _ := args[0].Unmark()
	str, _ := args[1].Unmark()
	if !spaces.IsKnown() || spaces.IsNull() || !str.IsKnown() || str.IsNull() {
		return nil
	}
	bf := spaces.AsBigFloat()
	n, _ := bf.Int64()
	lines := 1
	for _, c := range str.AsString() {
		if c == '\n' {
			lines++
		}
	}
	if !bf.IsInt() || n < 0 || n > maxIndentBytes || n*int64(lines) > maxIndentBytes {
		return fmt.Errorf("indent would add more than %d bytes", maxIndentBytes)
	}
	return nil
}
