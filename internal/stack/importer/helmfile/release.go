package helmfile

import (
	"fmt"
	"strings"
)

var flagAttrs = map[string]string{
	"wait":            "wait",
	"waitForJobs":     "wait_for_jobs",
	"atomic":          "atomic",
	"cleanupOnFail":   "cleanup_on_fail",
	"disableHooks":    "disable_hooks",
	"createNamespace": "create_namespace",
	"historyMax":      "history_max",
	"timeout":         "timeout",
}

// release writes one release block. Its attributes follow the order of
// the helmfile's keys, each followed by the notes that stood after it.
func (c *converter) release(b *strings.Builder, r *entry, label string, st *state, labels []string) {
	c.inline = map[int]bool{}
	m := c.releaseTemplates(r)
	r = &entry{m: m, file: r.file, before: r.before, after: r.after, end: r.end}
	name := c.canon(m.get("name"))
	c.notes(b, r.before, "")
	fmt.Fprintf(b, "release %q {\n", label)
	attr := func(k, text string) { fmt.Fprintf(b, "  %s = %s\n", k, text) }
	val := func(attrName string, v any) {
		t, ok := c.hclText(v, inStack, "  ")
		if !ok {
			b.WriteString(c.handComments(v, "  "))
			return
		}
		attr(attrName, t)
	}
	installed, hasInstalled := m.vals["installed"]
	counted := false
	if hasInstalled {
		if on, ok := boolVal(installed); !ok || !on {
			counted = true
		}
	}
	doneValues, donePatches := false, false
	for _, k := range m.keys {
		v := m.vals[k]
		switch k {
		case "name":
			if label != name || counted {
				val("name", v)
			}
		case "namespace", "version":
			val(k, v)
		case "chart":
			if s, ok := str(v); ok {
				if strings.HasPrefix(s, "/") || strings.HasPrefix(s, ".") {
					if c.localCharts[s] == nil {
						c.localCharts[s] = []string{r.file}
					}
					c.localCharts[s] = append(c.localCharts[s], "release "+name)
				} else if !strings.Contains(s, "/") {
					c.warn("%s: release %s: chart %q is neither a path nor repo/name", r.file, name, s)
				}
			}
			val("chart", v)
		case "values", "secrets":
			if !doneValues {
				doneValues = true
				c.values(b, r, name)
			}
		case "set":
			c.set(b, r, name, v)
		case "labels":
			val("labels", v)
		case "needs":
			c.needs(b, r, name, v, st.releases, labels)
		case "installed":
			switch on, ok := boolVal(v); {
			case ok && on:
			case ok:
				attr("count", "0")
			default:
				t, ok := c.hclText(v, inStack, "  ")
				switch {
				case !ok:
					b.WriteString(c.handComments(v, "  "))
				case c.truthOf(v) != "":
					// installed: {{ .Values.x | default false }}
					attr("count", c.truthOf(v)+" == true ? 1 : 0")
				default:
					attr("count", t+" ? 1 : 0")
				}
			}
		case "timeout":
			c.timeout(b, v)
		case "strategicMergePatches", "jsonPatches":
			if !donePatches {
				donePatches = true
				c.patches(b, r)
			}
		case "kubeContext":
			c.warn("%s: release %s: kubeContext %s: declare cluster %q { context = %q } and set cluster = cluster.NAME", r.file, name, c.canon(v), ident(c.canon(v)), c.canon(v))
		case "condition":
			c.warn("%s: release %s: condition %s is not imported: use count = var.x ? 1 : 0", r.file, name, c.canon(v))
		case "hooks":
			c.warn("%s: release %s: helmfile hooks are not imported", r.file, name)
		case "missingFileHandler":
			// read by values: Warn, Info and Debug make values files optional
		case "plainHttp":
			// convoy speaks plain HTTP to registries on loopback addresses only

		default:
			if a, ok := flagAttrs[k]; ok {
				val(a, v)
			} else {
				c.warn("%s: release %s: %s is not imported", r.file, name, k)
			}
		}
		c.notes(b, r.after[k], "  ")
	}
	for _, k := range st.defaults.keys {
		if _, set := m.vals[k]; set {
			continue
		}
		v := st.defaults.vals[k]
		switch a, ok := flagAttrs[k]; {
		case k == "timeout":
			c.timeout(b, v)
		case ok:
			val(a, v)
		}
	}
	c.notes(b, r.end, "  ")
	b.WriteString("}\n\n")
}

func (c *converter) timeout(b *strings.Builder, v any) {
	switch v := v.(type) {
	case int64:
		fmt.Fprintf(b, "  timeout = \"%ds\"\n", v)
	case rawExpr:
		if t, ok := c.stringText(placeholder(int(v))+"s", inStack); ok {
			fmt.Fprintf(b, "  timeout = %s\n", t)
		} else {
			b.WriteString(c.handComments(v, "  "))
		}
	default:
		c.warn("release: timeout %v is not a number of seconds: not imported", c.canon(v))
	}
}

// values writes the values layers: the values entries in order, then the
// secrets, as helmfile passes them to helm.
func (c *converter) values(b *strings.Builder, r *entry, name string) {
	var layers []string
	optional := false
	switch h, _ := str(r.m.get("missingFileHandler")); h {
	case "Warn", "Info", "Debug":
		optional = true
	case "", "Error":
	default:
		c.warn("%s: release %s: missingFileHandler %s: helmfile knows Error, Warn, Info and Debug; values files are required", r.file, name, c.canon(r.m.get("missingFileHandler")))
	}
	var comments strings.Builder
	vs, _ := r.m.get("values").([]any)
	for _, v := range vs {
		switch v := v.(type) {
		case string:
			if t, ok := c.valuesFile(r, name, v, false, optional); ok {
				layers = append(layers, t)
			} else {
				comments.WriteString(c.handComments(v, "    "))
			}
		default:
			t, ok := c.hclText(v, inStack, "    ")
			if !ok {
				comments.WriteString(c.handComments(v, "    "))
				continue
			}
			layers = append(layers, t)
		}
	}
	ss, _ := r.m.get("secrets").([]any)
	for _, s := range ss {
		p, ok := s.(string)
		if !ok {
			c.warn("%s: release %s: a secrets entry that is not a path: not imported", r.file, name)
			continue
		}
		if t, ok := c.valuesFile(r, name, p, true, optional); ok {
			layers = append(layers, t)
		} else {
			comments.WriteString(c.handComments(p, "    "))
		}
	}
	if len(layers) == 0 && comments.Len() == 0 {
		return
	}
	b.WriteString("  values = [\n")
	b.WriteString(comments.String())
	for _, l := range layers {
		b.WriteString("    " + l + ",\n")
	}
	b.WriteString("  ]\n")
}

func (c *converter) set(b *strings.Builder, r *entry, name string, v any) {
	l, _ := v.([]any)
	var out strings.Builder
	for _, x := range l {
		s, ok := x.(*omap)
		if !ok {
			continue
		}
		key, _ := str(s.get("name"))
		if key == "" {
			c.warn("%s: release %s: a set entry without a literal name: not imported", r.file, name)
			continue
		}
		var t string
		if f, ok := str(s.get("file")); ok {
			p, ok := c.copyFile(r.file, "release "+name, f)
			if !ok {
				continue
			}
			t = fmt.Sprintf("file(%q)", p)
		} else {
			var ok bool
			t, ok = c.hclText(s.get("value"), inStack, "    ")
			if !ok {
				out.WriteString(c.handComments(s.get("value"), "    "))
				continue
			}
		}
		fmt.Fprintf(&out, "    %q = %s\n", key, t)
	}
	if out.Len() > 0 {
		b.WriteString("  set = {\n" + out.String() + "  }\n")
	}
}

// needs writes depends_on: each need ("name", "ns/name" or
// "context/ns/name") is the release of that name (and namespace).
func (c *converter) needs(b *strings.Builder, r *entry, name string, v any, all []*entry, labels []string) {
	l, _ := v.([]any)
	var deps []string
	for _, x := range l {
		n := c.canon(x)
		target, ns := n, ""
		if i := strings.LastIndex(n, "/"); i >= 0 {
			target, ns = n[i+1:], n[:i]
			if j := strings.LastIndex(ns, "/"); j >= 0 {
				ns = ns[j+1:]
			}
		}
		found := ""
		for i, o := range all {
			if c.canon(o.m.get("name")) == target && (ns == "" || c.canon(o.m.get("namespace")) == ns) {
				found = labels[i]
				break
			}
		}
		if found == "" {
			c.warn("%s: release %s: needs %s: no such release in the helmfile", r.file, name, n)
			continue
		}
		deps = append(deps, "release."+found)
	}
	if len(deps) > 0 {
		fmt.Fprintf(b, "  depends_on = [%s]\n", strings.Join(deps, ", "))
	}
}

func (c *converter) patches(b *strings.Builder, r *entry) {
	var out []string
	sm, _ := r.m.get("strategicMergePatches").([]any)
	for _, p := range sm {
		pm, ok := p.(*omap)
		if !ok {
			continue
		}
		target := newOmap()
		if k, ok := str(pm.get("kind")); ok {
			target.set("kind", k, 0)
		}
		if md, ok := pm.get("metadata").(*omap); ok {
			if n, ok := str(md.get("name")); ok {
				target.set("name", n, 0)
			}
		}
		tt, _ := c.hclText(target, inStack, "      ")
		pt, ok := c.hclText(pm, inStack, "      ")
		if !ok {
			b.WriteString(c.handComments(pm, "    "))
			continue
		}
		out = append(out, fmt.Sprintf("{\n      target = %s\n      patch  = yamlencode(%s)\n    }", tt, pt))
	}
	jp, _ := r.m.get("jsonPatches").([]any)
	for _, p := range jp {
		pm, ok := p.(*omap)
		if !ok {
			continue
		}
		target := newOmap()
		if tm, ok := pm.get("target").(*omap); ok {
			for _, k := range []string{"kind", "name", "namespace"} {
				if s, ok := str(tm.get(k)); ok {
					target.set(k, s, 0)
				}
			}
		}
		tt, _ := c.hclText(target, inStack, "      ")
		pt, ok := c.hclText(pm.get("patch"), inStack, "      ")
		if !ok {
			b.WriteString(c.handComments(pm, "    "))
			continue
		}
		out = append(out, fmt.Sprintf("{\n      target = %s\n      patch  = jsonencode(%s)\n    }", tt, pt))
	}
	if len(out) > 0 {
		b.WriteString("  patches = [\n")
		for _, o := range out {
			b.WriteString("    " + o + ",\n")
		}
		b.WriteString("  ]\n")
	}
}

// truthOf is X when v is one translated `X | default false`.
func (c *converter) truthOf(v any) string {
	if i, ok := v.(rawExpr); ok {
		return c.items[i].item.expr.truthOf
	}
	return ""
}
