package run

import (
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/zclconf/go-cty/cty"
)

// jsonValue converts a decoded JSON value (what unstructured objects hold:
// maps, slices, strings, bools, int64, float64, json.Number, nil) to the
// cty value cty's JSON decoding would give its JSON text with its implied
// type: objects are object values, arrays tuples, null a dynamic null, and
// numbers exact as their JSON text. It walks the value once, where a JSON
// round trip (marshal, imply the type, unmarshal) reads the text twice.
func jsonValue(v any) (cty.Value, error) {
	switch v := v.(type) {
	case nil:
		return cty.NullVal(cty.DynamicPseudoType), nil
	case string:
		return cty.StringVal(v), nil
	case bool:
		return cty.BoolVal(v), nil
	case int64:
		return intValue(v), nil
	case int:
		return intValue(int64(v)), nil
	case int32:
		return intValue(int64(v)), nil
	case float64:
		// As JSON writes it, so that 0.1 is the decimal 0.1 and not the
		// binary fraction nearest to it.
		b, err := json.Marshal(v)
		if err != nil {
			return cty.NilVal, err
		}
		return cty.ParseNumberVal(string(b))
	case json.Number:
		return cty.ParseNumberVal(string(v))
	case map[string]any:
		if len(v) == 0 {
			return cty.EmptyObjectVal, nil
		}
		attrs := make(map[string]cty.Value, len(v))
		for k, e := range v {
			ev, err := jsonValue(e)
			if err != nil {
				return cty.NilVal, fmt.Errorf("%s: %w", k, err)
			}
			attrs[k] = ev
		}
		return cty.ObjectVal(attrs), nil
	case []any:
		if len(v) == 0 {
			return cty.EmptyTupleVal, nil
		}
		elems := make([]cty.Value, len(v))
		for i, e := range v {
			ev, err := jsonValue(e)
			if err != nil {
				return cty.NilVal, fmt.Errorf("[%d]: %w", i, err)
			}
			elems[i] = ev
		}
		return cty.TupleVal(elems), nil
	default:
		return cty.NilVal, fmt.Errorf("unsupported value of type %T", v)
	}
}

// intValue is v at the precision cty gives numbers parsed from text (512
// bits), which arithmetic on it keeps.
func intValue(v int64) cty.Value {
	return cty.NumberVal(new(big.Float).SetPrec(512).SetInt64(v))
}
