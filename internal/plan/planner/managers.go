package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/convoy-sh/convoy/internal/plan"

	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// projectSet restricts v to the fields shape sets: maps are followed key
// by key, lists and scalars taken whole, and fields v lacks left out. It is
// how drift compares only what convoy applies.
func projectSet(v, shape any) any { return projectFields(v, shape, nil) }

// projectFields restricts v to the fields shape sets, following maps key by
// key and taking lists and scalars whole. A field v lacks is left out when
// absent is nil, else it stands as absent.
func projectFields(v, shape, absent any) any {
	sm, isMap := shape.(map[string]any)
	vm, vIsMap := v.(map[string]any)
	if !isMap || !vIsMap {
		return v
	}
	out := make(map[string]any, len(sm))
	for k, sub := range sm {
		if lv, ok := vm[k]; ok {
			out[k] = projectFields(lv, sub, absent)
		} else if absent != nil {
			out[k] = absent
		}
	}
	return out
}

// setManagers names, on each change, the field manager other than convoy's
// that owns the field in live (Change.Manager).
func setManagers(d *plan.Diff, rd *release.Renderer, live *unstructured.Unstructured) {
	if d == nil {
		return
	}
	for _, c := range d.Changes {
		p, ok := pointerAt(c.Path, live.Object)
		if !ok {
			continue
		}
		for _, o := range kube.OwnersOf(live, p) {
			if !rd.IsOwn(o) {
				c.Manager = o.Manager
				break
			}
		}
	}
}

// pointerAt resolves a Change.Path (`spec.replicas`, `data["a.b"]`,
// `spec.containers[name=web].image`, `spec.ports[0]`) against root into a
// JSON pointer, list elements by their index in root.
func pointerAt(path string, root any) (kube.Pointer, bool) {
	var p kube.Pointer
	v := root
	key := func(k string) bool {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[k]; !ok {
			return false
		}
		p = append(p, k)
		return true
	}
	for i := 0; i < len(path); {
		switch {
		case path[i] == '.':
			i++
		case strings.HasPrefix(path[i:], `["`):
			q, err := strconv.QuotedPrefix(path[i+1:])
			if err != nil {
				return nil, false
			}
			k, _ := strconv.Unquote(q)
			if !key(k) {
				return nil, false
			}
			i += 1 + len(q) + 1 // [ "..." ]
		case path[i] == '[':
			end := strings.IndexByte(path[i:], ']')
			list, ok := v.([]any)
			if end < 0 || !ok {
				return nil, false
			}
			inner := path[i+1 : i+end]
			i += end + 1
			at := -1
			if field, id, ok := strings.Cut(inner, "="); ok {
				for j, e := range list {
					if m, ok := e.(map[string]any); ok && fmt.Sprint(m[field]) == id {
						at = j
						break
					}
				}
			} else if n, err := strconv.Atoi(inner); err == nil && n >= 0 && n < len(list) {
				at = n
			}
			if at < 0 {
				return nil, false
			}
			v = list[at]
			p = append(p, strconv.Itoa(at))
		default:
			end := strings.IndexAny(path[i:], ".[")
			if end < 0 {
				end = len(path) - i
			}
			if !key(path[i : i+end]) {
				return nil, false
			}
			i += end
		}
	}
	return p, true
}
