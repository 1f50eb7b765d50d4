package chart

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits of --set expressions, as Helm's strvals.
const (
	maxSetIndex       = 65536
	maxSetNestedLevel = 30
)

var errNotList = errors.New("not a list")

// ParseSet applies one Helm --set expression ("a.b=1,c[0].d=x,e={1,2}")
// to into. Values are typed as Helm types them: true/false, null, int64,
// everything else a string. Error texts are Helm's.
func ParseSet(s string, into map[string]any) error {
	return (&setParser{sc: strings.NewReader(s)}).parse(into)
}

// ParseSetString is --set-string: every value stays a string.
func ParseSetString(s string, into map[string]any) error {
	return (&setParser{sc: strings.NewReader(s), allStrings: true}).parse(into)
}

type setParser struct {
	sc         *strings.Reader
	allStrings bool
}

func (p *setParser) parse(data map[string]any) error {
	for {
		err := p.key(data, 0)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
}

const (
	typeList = "[]interface {}"
	typeMap  = "map[string]interface {}"
)

func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return typeMap
	case []any:
		return typeList
	}
	return fmt.Sprintf("%T", v)
}

func (p *setParser) key(data map[string]any, level int) error {
	for {
		k, last, err := runesUntil(p.sc, "=[,.")
		switch {
		case err != nil:
			if len(k) == 0 {
				return err
			}
			return fmt.Errorf("key %q has no value", string(k))
		case last == '[':
			i, err := p.keyIndex()
			if err != nil {
				return fmt.Errorf("error parsing index: %w", err)
			}
			kk := string(k)
			list := []any{}
			if existing, ok := data[kk]; ok {
				l, ok := existing.([]any)
				if !ok {
					return fmt.Errorf("unable to parse key: interface conversion: interface {} is %s, not %s", nilName(existing), typeList)
				}
				list = l
			}
			list, err = p.listItem(list, i, level)
			if err != nil && strings.HasPrefix(err.Error(), panicMarker) {
				return errors.New("unable to parse key: " + strings.TrimPrefix(err.Error(), panicMarker))
			}
			setKey(data, kk, list)
			return err
		case last == '=':
			vl, e := p.valList()
			switch {
			case e == nil:
				setKey(data, string(k), vl)
				return nil
			case errors.Is(e, io.EOF):
				setKey(data, string(k), "")
				return e
			case errors.Is(e, errNotList):
				rs, e := p.val()
				if e != nil && !errors.Is(e, io.EOF) {
					return e
				}
				setKey(data, string(k), p.typed(rs))
				return nil
			default:
				return e
			}
		case last == ',':
			setKey(data, string(k), "")
			return fmt.Errorf("key %q has no value (cannot end with ,)", string(k))
		case last == '.':
			level++
			if level > maxSetNestedLevel {
				return fmt.Errorf("value name nested level is greater than maximum supported nested level of %d", maxSetNestedLevel)
			}
			inner := map[string]any{}
			if existing, ok := data[string(k)]; ok {
				m, ok := existing.(map[string]any)
				if !ok {
					return fmt.Errorf("unable to parse key: interface conversion: interface {} is %s, not %s", nilName(existing), typeMap)
				}
				inner = m
			}
			e := p.key(inner, level)
			if e == nil && len(inner) == 0 {
				return fmt.Errorf("key map %q has no value", string(k))
			}
			if len(inner) != 0 {
				setKey(data, string(k), inner)
			}
			return e
		}
	}
}

// panicMarker tags errors that Helm produces by recovering a panic in a
// list context; the enclosing key() turns them into "unable to parse key".
const panicMarker = "\x00panic:"

func nilName(v any) string {
	if v == nil {
		return "nil"
	}
	return typeName(v)
}

func setKey(data map[string]any, key string, val any) {
	if key == "" {
		return
	}
	data[key] = val
}

func setIndex(list []any, index int, val any) ([]any, error) {
	if index < 0 {
		return list, fmt.Errorf("negative %d index not allowed", index)
	}
	if index > maxSetIndex {
		return list, fmt.Errorf("index of %d is greater than maximum supported index of %d", index, maxSetIndex)
	}
	if len(list) <= index {
		grown := make([]any, index+1)
		copy(grown, list)
		list = grown
	}
	list[index] = val
	return list, nil
}

func (p *setParser) keyIndex() (int, error) {
	v, _, err := runesUntil(p.sc, "]")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(v))
}

func (p *setParser) listItem(list []any, i, level int) ([]any, error) {
	if i < 0 {
		return list, fmt.Errorf("negative %d index not allowed", i)
	}
	k, last, err := runesUntil(p.sc, "[.=")
	switch {
	case len(k) > 0:
		return list, fmt.Errorf("unexpected data at end of array index: %q", string(k))
	case err != nil:
		return list, err
	case last == '=':
		vl, e := p.valList()
		switch {
		case e == nil:
			return setIndex(list, i, vl)
		case errors.Is(e, io.EOF):
			return setIndex(list, i, "")
		case errors.Is(e, errNotList):
			rs, e := p.val()
			if e != nil && !errors.Is(e, io.EOF) {
				return list, e
			}
			return setIndex(list, i, p.typed(rs))
		default:
			return list, e
		}
	case last == '[':
		next, err := p.keyIndex()
		if err != nil {
			return list, fmt.Errorf("error parsing index: %w", err)
		}
		var cur []any
		if len(list) > i && list[i] != nil {
			l, ok := list[i].([]any)
			if !ok {
				return list, errors.New(panicMarker + fmt.Sprintf("interface conversion: interface {} is %s, not %s", typeName(list[i]), typeList))
			}
			cur = l
		}
		inner, err := p.listItem(cur, next, level)
		if err != nil {
			return list, err
		}
		return setIndex(list, i, inner)
	case last == '.':
		inner := map[string]any{}
		if len(list) > i {
			m, ok := list[i].(map[string]any)
			if !ok {
				m = map[string]any{}
				list[i] = m
			}
			inner = m
		}
		if err := p.key(inner, level); err != nil {
			return list, err
		}
		return setIndex(list, i, inner)
	default:
		return nil, fmt.Errorf("parse error: unexpected token %v", last)
	}
}

func (p *setParser) val() ([]rune, error) {
	v, _, err := runesUntil(p.sc, ",")
	return v, err
}

func (p *setParser) valList() ([]any, error) {
	r, _, err := p.sc.ReadRune()
	if err != nil {
		return []any{}, err
	}
	if r != '{' {
		_ = p.sc.UnreadRune()
		return []any{}, errNotList
	}
	list := []any{}
	for {
		rs, last, err := runesUntil(p.sc, ",}")
		switch {
		case err != nil:
			if errors.Is(err, io.EOF) {
				err = errors.New("list must terminate with '}'")
			}
			return list, err
		case last == '}':
			if r, _, e := p.sc.ReadRune(); e == nil && r != ',' {
				_ = p.sc.UnreadRune()
			}
			return append(list, p.typed(rs)), nil
		case last == ',':
			list = append(list, p.typed(rs))
		}
	}
}

// runesUntil reads up to one of the stop runes, honouring backslash escapes.
func runesUntil(in *strings.Reader, stop string) ([]rune, rune, error) {
	var v []rune
	for {
		r, _, err := in.ReadRune()
		switch {
		case err != nil:
			return v, r, err
		case strings.ContainsRune(stop, r):
			return v, r, nil
		case r == '\\':
			next, _, err := in.ReadRune()
			if err != nil {
				return v, next, err
			}
			v = append(v, next)
		default:
			v = append(v, r)
		}
	}
}

func (p *setParser) typed(rs []rune) any {
	val := string(rs)
	if p.allStrings {
		return val
	}
	switch {
	case strings.EqualFold(val, "true"):
		return true
	case strings.EqualFold(val, "false"):
		return false
	case strings.EqualFold(val, "null"):
		return nil
	case val == "0":
		return int64(0)
	}
	if val != "" && val[0] != '0' {
		if iv, err := strconv.ParseInt(val, 10, 64); err == nil {
			return iv
		}
	}
	return val
}
