package helmfile

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// The values read from a helmfile keep their YAML order and where they
// stood. A scalar is a Go value: string, int64, *big.Int, float64, bool,
// nil, or rawExpr: a plain (unquoted) scalar that was exactly one
// translated template expression, written as the expression itself.

// omap is a YAML mapping in its order.
type omap struct {
	keys  []string
	vals  map[string]any
	lines map[string]int // each key's line in its part
	// file and first: the file the mapping was read from and the line its
	// part starts at (lines[k]+first-1 is the key's line in file).
	file  string
	first int
}

// locate records in every mapping of v the file and part it was read
// from.
func locate(v any, file string, first int) {
	switch v := v.(type) {
	case *omap:
		if v.file != "" {
			return // an alias, located already
		}
		v.file, v.first = file, first
		for _, k := range v.keys {
			locate(v.vals[k], file, first)
		}
	case []any:
		for _, x := range v {
			locate(x, file, first)
		}
	}
}

func (m *omap) get(k string) any {
	if m == nil {
		return nil
	}
	return m.vals[k]
}

func (m *omap) set(k string, v any, line int) {
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
	m.lines[k] = line
}

func newOmap() *omap { return &omap{vals: map[string]any{}, lines: map[string]int{}} }

// rawExpr is the index of a placeholder that stood alone, unquoted.
type rawExpr int

// placeholders are what a template action is replaced with before the
// YAML is parsed: __convoy_N__, N indexing the converter's items.
var placeholderRE = regexp.MustCompile(`__convoy_([0-9]+)__`)

func placeholder(n int) string { return fmt.Sprintf("__convoy_%d__", n) }

// maxNodes bounds the nodes fromNode visits, aliases expanded: a few
// aliases of aliases would otherwise expand without end.
const maxNodes = 1 << 20

// fromNode converts a parsed YAML node.
func fromNode(n *yaml.Node) (any, error) {
	budget := maxNodes
	return fromNodeBudget(n, &budget)
}

func fromNodeBudget(n *yaml.Node, budget *int) (any, error) {
	*budget--
	if *budget < 0 {
		return nil, fmt.Errorf("line %d: more than %d values once aliases are expanded", n.Line, maxNodes)
	}
	fromNode := func(n *yaml.Node) (any, error) { return fromNodeBudget(n, budget) }
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return fromNode(n.Content[0])
	case yaml.AliasNode:
		return fromNode(n.Alias)
	case yaml.MappingNode:
		m := newOmap()
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" && k.Tag == "!!merge" {
				merged, err := fromNode(v)
				if err != nil {
					return nil, err
				}
				var srcs []any
				if l, ok := merged.([]any); ok {
					srcs = l
				} else {
					srcs = []any{merged}
				}
				for _, s := range srcs {
					if sm, ok := s.(*omap); ok {
						for _, sk := range sm.keys {
							if _, ok := m.vals[sk]; !ok {
								m.set(sk, sm.vals[sk], sm.lines[sk])
							}
						}
					}
				}
				continue
			}
			val, err := fromNode(v)
			if err != nil {
				return nil, err
			}
			m.set(k.Value, val, k.Line)
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := fromNode(c)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil, nil
}

func scalar(n *yaml.Node) (any, error) {
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return n.Value, nil
	}
	if m := placeholderRE.FindStringSubmatch(n.Value); m != nil && m[0] == n.Value {
		i, _ := strconv.Atoi(m[1])
		return rawExpr(i), nil
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		b, ok := new(big.Int).SetString(strings.ReplaceAll(n.Value, "_", ""), 0)
		if !ok {
			return n.Value, nil
		}
		return b, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return f, nil
	}
	return n.Value, nil
}

// parseYAML parses one YAML document (a helmfile part, a values file).
func parseYAML(src string) (any, error) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		return nil, err
	}
	return fromNode(&n)
}

// str is v as a plain string when it is one.
func str(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

// boolVal is v when it is a literal bool.
func boolVal(v any) (bool, bool) {
	b, ok := v.(bool)
	return b, ok
}

// deepMerge merges src into dst, later keys winning, maps merged key by
// key (as helmfile merges environment values).
func deepMerge(dst, src *omap) {
	for _, k := range src.keys {
		sv := src.vals[k]
		if dm, ok := dst.vals[k].(*omap); ok {
			if sm, ok := sv.(*omap); ok {
				deepMerge(dm, sm)
				continue
			}
		}
		dst.set(k, clone(sv), src.lines[k])
	}
}

// clone copies the mappings and lists of v, so merging into the copy
// leaves v as it was.
func clone(v any) any {
	switch v := v.(type) {
	case *omap:
		m := newOmap()
		for _, k := range v.keys {
			m.set(k, clone(v.vals[k]), v.lines[k])
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = clone(x)
		}
		return l
	}
	return v
}
