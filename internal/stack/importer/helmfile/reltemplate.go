package helmfile

import (
	"strconv"
	"strings"
)

// Release templates: helmfile v1 renders a release's settings a second
// time, per release, after the helmfile itself: what the first rendering
// left as template text ({{`{{ .Release.Name }}`}} becomes
// {{ .Release.Name }}) is evaluated with the release's name, namespace,
// labels and the environment. Templates shared through YAML anchors
// (`templates:` merged with <<: *name) use it to name values files per
// release: values/{{`{{ .Release.Name }}`}}/common.yaml.
//
// releaseTemplates returns the release's settings with every such
// second-level template resolved: .Release.Name and .Release.Namespace
// (when the release sets them literally) become text, anything the
// translator knows (.Environment.Name, .Values.x, ...) an expression, and
// anything else an item left by hand, so that no Go template is ever
// written into a live HCL expression. The settings are copied, never
// changed in place: a template's values are shared by every release that
// merges it.
func (c *converter) releaseTemplates(r *entry) *omap {
	lit := func(k string) (string, bool) {
		s, ok := str(r.m.get(k))
		if !ok || placeholderRE.MatchString(s) {
			return "", false
		}
		return s, true
	}
	name, hasName := lit("name")
	ns, hasNS := lit("namespace")
	known := map[string]string{}
	if hasName {
		known["release.name"] = name
	}
	if hasNS {
		known["release.namespace"] = ns
	}
	out := newOmap()
	out.file, out.first = r.m.file, r.m.first
	for _, k := range r.m.keys {
		out.set(k, c.resolveSecond(r.m.vals[k], known), r.m.lines[k])
	}
	return out
}

// resolveSecond copies v with its second-level templates resolved.
func (c *converter) resolveSecond(v any, known map[string]string) any {
	switch v := v.(type) {
	case rawExpr:
		if _, ok := c.secondLevel(int(v)); !ok {
			return v
		}
		s := c.resolveSecondString(placeholder(int(v)), known)
		if m := placeholderRE.FindStringSubmatchIndex(s); m != nil && m[0] == 0 && m[1] == len(s) {
			i, _ := strconv.Atoi(s[m[2]:m[3]])
			return rawExpr(i)
		}
		return s
	case string:
		return c.resolveSecondString(v, known)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = c.resolveSecond(x, known)
		}
		return out
	case *omap:
		out := newOmap()
		out.file, out.first = v.file, v.first
		for _, k := range v.keys {
			out.set(c.resolveSecondString(k, known), c.resolveSecond(v.vals[k], known), v.lines[k])
		}
		return out
	}
	return v
}

// secondLevel is the template text a translated item stands for when it
// is a string constant holding a template ({{`{{ .Release.Name }}`}}).
func (c *converter) secondLevel(i int) (string, bool) {
	p := c.items[i]
	if p.item.kind != itemExpr || !strings.HasPrefix(p.item.expr.text, `"`) {
		return "", false
	}
	s, err := strconv.Unquote(p.item.expr.text)
	if err != nil || !strings.Contains(s, "{{") {
		return "", false
	}
	return s, true
}

// resolveSecondString replaces the placeholders of s that stand for
// second-level templates by their resolution: text, or placeholders of
// new items (translated, or left by hand).
func (c *converter) resolveSecondString(s string, known map[string]string) string {
	return placeholderRE.ReplaceAllStringFunc(s, func(ph string) string {
		i, _ := strconv.Atoi(placeholderRE.FindStringSubmatch(ph)[1])
		tmpl, ok := c.secondLevel(i)
		if !ok {
			return ph
		}
		outer := c.items[i]
		var b strings.Builder
		last := 0
		for _, it := range c.tr.segment(tmpl, nil) {
			b.WriteString(tmpl[last:it.start])
			last = it.end
			if it.kind == itemComment {
				continue
			}
			if it.kind == itemExpr {
				if text, ok := known[it.expr.text]; ok {
					b.WriteString(text)
					continue
				}
				if it.refs.release {
					it.kind, it.why = itemHand, "the release's name or namespace is itself a template: resolve it by hand"
				}
			}
			// A new item in the outer item's place, so that what is left
			// by hand points at the helmfile's line.
			n := &placed{item: outer.item, file: outer.file, src: outer.src, line: outer.line, refs: it.refs}
			n.item.kind, n.item.expr, n.item.refs, n.item.why = it.kind, it.expr, it.refs, ""
			if it.kind == itemHand {
				n.item.why = it.why + " (in a release template, rendered per release: " + strings.TrimSpace(tmpl[it.start:it.end]) + ")"
			}
			c.items = append(c.items, n)
			b.WriteString(placeholder(len(c.items) - 1))
		}
		b.WriteString(tmpl[last:])
		return b.String()
	})
}
