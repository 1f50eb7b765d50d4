package chart

import (
	"fmt"
	"maps"
	"slices"
)

// warnFunc receives the non-fatal messages Helm logs while coalescing.
type warnFunc func(format string, args ...any)

func concatPrefix(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// coalesceNode merges a chart's defaults (and recursively its subcharts')
// into dest, which holds the higher-priority values. With merge set, nulls
// are kept (Helm's MergeValues) instead of deleting keys.
func coalesceNode(warn warnFunc, n *node, dest map[string]any, prefix string, merge bool) (map[string]any, error) {
	coalesceOwnValues(warn, n, dest, prefix, merge)
	return coalesceDeps(warn, n, dest, prefix, merge)
}

func coalesceDeps(warn warnFunc, n *node, dest map[string]any, prefix string, merge bool) (map[string]any, error) {
	for _, sub := range n.deps {
		name := sub.name()
		if c, ok := dest[name]; !ok {
			dest[name] = map[string]any{}
		} else if !isTable(c) {
			return dest, fmt.Errorf("type mismatch on %s: %t", name, c)
		}
		dv := dest[name].(map[string]any)
		subPrefix := concatPrefix(prefix, n.name())
		coalesceGlobals(warn, dv, dest, subPrefix)
		out, err := coalesceNode(warn, sub, dv, subPrefix, merge)
		dest[name] = out
		if err != nil {
			return dest, err
		}
	}
	return dest, nil
}

// coalesceGlobals copies the parent's "global" table into the child's.
// The parent's globals win.
func coalesceGlobals(warn warnFunc, dest, src map[string]any, prefix string) {
	var dg, sg map[string]any
	if g, ok := dest[globalKey]; !ok {
		dg = map[string]any{}
	} else if dg, ok = g.(map[string]any); !ok {
		warn("warning: skipping globals because destination %s is not a table.", globalKey)
		return
	}
	if g, ok := src[globalKey]; !ok {
		sg = map[string]any{}
	} else if sg, ok = g.(map[string]any); !ok {
		warn("warning: skipping globals because source %s is not a table.", globalKey)
		return
	}
	for _, key := range sortedKeys(sg) {
		val := sg[key]
		if vm, ok := val.(map[string]any); ok {
			vv := maps.Clone(vm)
			if destv, ok := dg[key]; !ok {
				dg[key] = vv
			} else if destvm, ok := destv.(map[string]any); !ok {
				warn("Conflict: cannot merge map onto non-map for %q. Skipping.", key)
			} else {
				coalesceTables(warn, vv, destvm, concatPrefix(prefix, key), true)
				dg[key] = vv
			}
		} else if dv, ok := dg[key]; ok && isTable(dv) {
			warn("key %s is table. Skipping", key)
		} else {
			dg[key] = val
		}
	}
	dest[globalKey] = dg
}

const globalKey = "global"

func coalesceOwnValues(warn warnFunc, n *node, v map[string]any, prefix string, merge bool) {
	subPrefix := concatPrefix(prefix, n.name())
	defaults := deepCopyMap(n.values)
	for _, key := range sortedKeys(defaults) {
		val := defaults[key]
		value, ok := v[key]
		if !ok {
			if !merge {
				if val == nil {
					continue
				}
				if sub, ok := val.(map[string]any); ok {
					cleanNilValues(sub)
				}
			}
			v[key] = val
			continue
		}
		if value == nil && !merge {
			delete(v, key)
			continue
		}
		dest, ok := value.(map[string]any)
		if !ok {
			continue
		}
		src, ok := val.(map[string]any)
		if !ok {
			if val != nil {
				warn("warning: skipped value for %s.%s: Not a table.", subPrefix, key)
			}
			continue
		}
		m := merge || n.hasDep(key)
		if !m {
			cleanNilValues(src)
		}
		coalesceTables(warn, dest, src, concatPrefix(subPrefix, key), m)
	}
}

// coalesceTables merges src into dst; dst's values win. A null in dst
// deletes the key unless merge is set. src may be modified.
func coalesceTables(warn warnFunc, dst, src map[string]any, prefix string, merge bool) map[string]any {
	if src == nil {
		return dst
	}
	if dst == nil {
		return src
	}
	srcNonNil := make(map[string]bool, len(src))
	for k, v := range src {
		if v != nil {
			srcNonNil[k] = true
		}
	}
	for k, v := range dst {
		if v == nil {
			src[k] = nil
		}
	}
	for _, key := range sortedKeys(src) {
		val := src[key]
		fullKey := concatPrefix(prefix, key)
		dv, ok := dst[key]
		switch {
		case ok && !merge && dv == nil && srcNonNil[key]:
			delete(dst, key)
		case !ok:
			dst[key] = val
		case isTable(val):
			if dvm, ok := dv.(map[string]any); ok {
				coalesceTables(warn, dvm, val.(map[string]any), fullKey, merge)
			} else {
				warn("warning: cannot overwrite table with non table for %s (%v)", fullKey, val)
			}
		case isTable(dv) && val != nil:
			warn("warning: destination for %s is a table. Ignoring non-table value (%v)", fullKey, val)
		}
	}
	return dst
}

func cleanNilValues(m map[string]any) {
	for k, v := range m {
		if v == nil {
			delete(m, k)
		} else if sub, ok := v.(map[string]any); ok {
			cleanNilValues(sub)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
