package chart

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"

	"sigs.k8s.io/yaml"
)

// ParseValues parses a values file as Helm does: every YAML document is
// read and later documents are merged over earlier ones.
func ParseValues(data []byte) (map[string]any, error) {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data[:len(data):len(data)], '\n')
	}
	values := map[string]any{}
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		doc, err := readYAMLDocument(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("error reading yaml document: %w", err)
		}
		current := map[string]any{}
		if err := yaml.Unmarshal(doc, &current); err != nil {
			return nil, fmt.Errorf("cannot unmarshal yaml document: %w", err)
		}
		values = MergeMaps(values, current)
	}
	return values, nil
}

// readYAMLDocument returns the next document of a YAML stream, split on
// lines starting with "---" exactly as k8s.io/apimachinery's YAMLReader.
func readYAMLDocument(r *bufio.Reader) ([]byte, error) {
	var buf bytes.Buffer
	for {
		line, err := r.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if bytes.HasPrefix(line, []byte("---")) {
			trimmed := strings.TrimSpace(string(line[3:]))
			if len(trimmed) > 0 && trimmed[0] != '#' {
				return nil, fmt.Errorf("invalid Yaml document separator: %s", trimmed)
			}
			if buf.Len() != 0 {
				return buf.Bytes(), nil
			}
			if errors.Is(err, io.EOF) {
				return nil, err
			}
		}
		if errors.Is(err, io.EOF) {
			if buf.Len() != 0 {
				return buf.Bytes(), nil
			}
			return nil, err
		}
		buf.Write(line)
	}
}

// MergeMaps returns a new map with b merged over a: nested maps merge,
// every other value of b replaces a's. Neither input is modified.
func MergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	maps.Copy(out, a)
	for k, v := range b {
		if vm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = MergeMaps(am, vm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// UserValues builds the user-supplied values of a release the way
// `helm template -f a.yaml -f b.yaml --set x=1 --set y=2` does: layers are
// merged in order with MergeMaps, then each set expression is applied.
func UserValues(layers []map[string]any, sets []string) (map[string]any, error) {
	base := map[string]any{}
	for _, l := range layers {
		base = MergeMaps(base, l)
	}
	for _, s := range sets {
		if err := ParseSet(s, base); err != nil {
			return nil, fmt.Errorf("failed parsing --set data: %w", err)
		}
	}
	return base, nil
}

// deepCopy copies the maps and lists of a values tree; leaves are shared.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return deepCopyMap(t)
	case []any:
		if t == nil {
			return t
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopy(e)
		}
		return out
	default:
		return v
	}
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = deepCopy(e)
	}
	return out
}

func isTable(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

// lookupTable walks a dotted path of tables ("a.b.c").
func lookupTable(v map[string]any, dotted string) (map[string]any, bool) {
	t := v
	for _, k := range strings.Split(dotted, ".") {
		next, ok := t[k].(map[string]any)
		if !ok {
			return nil, false
		}
		t = next
	}
	return t, true
}

// pathValue is Helm's Values.PathValue: the non-table value at a dotted path.
func pathValue(v map[string]any, dotted string) (any, bool) {
	parts := strings.Split(dotted, ".")
	t := v
	if len(parts) > 1 {
		var ok bool
		if t, ok = lookupTable(v, strings.Join(parts[:len(parts)-1], ".")); !ok {
			return nil, false
		}
	}
	val, ok := t[parts[len(parts)-1]]
	if !ok || isTable(val) {
		return nil, false
	}
	return val, true
}
