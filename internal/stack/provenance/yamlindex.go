package provenance

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/hashicorp/hcl/v2"
	yaml "go.yaml.in/yaml/v3"
)

// at is where one leaf is set: a position, and the expression whose
// references are what it read (nil: none).
type at struct {
	src *plan.Source
	via hcl.Expression // nil: none
	// vias, when set, are what it read instead of via's references.
	vias []plan.Origin
}

// yamlIndex is every leaf of YAML values text with the line and column
// of its key (of its item, in a list), in file. Documents are read as
// Helm reads them, a later one over an earlier; anchors point at what
// they name, and merge keys (<<) give the merged mapping's lines.
// Text that is not YAML gives what was read before the error. place
// says where a line and column of the text are shown (inFile, atFixed,
// or a heredoc's lines).
func yamlIndex(text []byte, place func(line, col int) *plan.Source, via hcl.Expression) map[string]at {
	out := map[string]at{}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
			w := yamlWalker{out: out, place: place, via: via}
			w.walk("", doc.Content[0], nil, 0)
		}
	}
	return out
}

type yamlWalker struct {
	out   map[string]at
	place func(line, col int) *plan.Source
	via   hcl.Expression
}

// inFile places text read from file at its lines.
func inFile(file string) func(line, col int) *plan.Source {
	return func(line, col int) *plan.Source { return &plan.Source{File: file, Line: line, Column: col} }
}

// atFixed places all of a text at src.
func atFixed(src *plan.Source) func(line, col int) *plan.Source {
	return func(int, int) *plan.Source { return src }
}

// walk indexes the leaves of n at path; key is the node that names it
// (the key of a mapping entry, the item itself in a list).
func (w *yamlWalker) walk(path string, n, key *yaml.Node, depth int) {
	if depth > 64 {
		return // as deep as any values file goes; aliases may loop
	}
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			w.leaf(path, key, n)
			return
		}
		// Merged mappings first: the mapping's own keys win.
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "<<" && n.Content[i].Tag == "!!merge" {
				w.merge(path, n.Content[i+1], depth)
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Value == "<<" && k.Tag == "!!merge" {
				continue
			}
			w.walk(joinKey(path, keyName(k)), n.Content[i+1], k, depth+1)
		}
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			w.leaf(path, key, n)
			return
		}
		for i, item := range n.Content {
			w.walk(index(path, i), item, item, depth+1)
		}
	default:
		w.leaf(path, key, n)
	}
}

func (w *yamlWalker) merge(path string, v *yaml.Node, depth int) {
	for v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	switch v.Kind {
	case yaml.MappingNode:
		w.walk(path, v, nil, depth+1)
	case yaml.SequenceNode:
		// The first mapping listed wins: walk the others first.
		for i := len(v.Content) - 1; i >= 0; i-- {
			w.merge(path, v.Content[i], depth+1)
		}
	}
}

func (w *yamlWalker) leaf(path string, key, n *yaml.Node) {
	if path == "" {
		return
	}
	if key == nil {
		key = n
	}
	w.out[path] = at{src: w.place(key.Line, key.Column), via: w.via}
}

// keyName is a mapping key as Helm reads it (sigs.k8s.io/yaml, YAML 1.1):
// a plain y, yes, on, … is a boolean, "true" or "false"; numbers are
// written as Go writes them.
func keyName(k *yaml.Node) string {
	if k.Kind != yaml.ScalarNode || k.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 || k.Tag == "!!str" && k.Style&yaml.TaggedStyle != 0 {
		return k.Value
	}
	switch k.Value {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE":
		return "true"
	case "n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE":
		return "false"
	}
	switch k.ShortTag() {
	case "!!int":
		if i, err := strconv.ParseInt(strings.ReplaceAll(k.Value, "_", ""), 0, 64); err == nil {
			return strconv.FormatInt(i, 10)
		}
	case "!!float":
		if f, err := strconv.ParseFloat(strings.ReplaceAll(k.Value, "_", ""), 64); err == nil {
			switch s := strconv.FormatFloat(f, 'g', -1, 32); s {
			case "+Inf":
				return ".inf"
			case "-Inf":
				return "-.inf"
			case "NaN":
				return ".nan"
			default:
				return s
			}
		}
	}
	return k.Value
}
