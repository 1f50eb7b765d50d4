package helmfile

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// readFile reads a file the helmfile names, refusing text that holds what
// looks like one of the converter's placeholders.
func (c *converter) readFile(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(c.dir, name))
	if err != nil {
		return "", err
	}
	if placeholderRE.Match(b) {
		return "", fmt.Errorf("%s holds %s, which convoy import uses for its own placeholders: rename it", name, placeholderRE.Find(b))
	}
	return string(b), nil
}

// copyFile brings a file the helmfile reads into the stack directory, at
// the same relative path; it returns that path.
func (c *converter) copyFile(file, what, name string) (string, bool) {
	if filepath.IsAbs(name) || strings.HasPrefix(filepath.Clean(name), "..") {
		c.warn("%s: %s: %s is outside the helmfile's directory: not copied; a stack reads no file outside its directory: copy it in and adjust the path", file, what, name)
		return name, true
	}
	b, err := os.ReadFile(filepath.Join(c.dir, name))
	if err != nil {
		c.warn("%s: %s: %v", file, what, err)
		return "", false
	}
	rel := filepath.ToSlash(filepath.Clean(name))
	c.res.Files[rel] = b
	return rel, true
}

// valuesFile is the values layer of a release's values or secrets path:
// file("p"), sops_file("p"), or for a values template (.gotmpl)
// templatefile("p.tpl", {...}) of its translation. A templated path
// ("values/{{ .Environment.Name }}.yaml") becomes an HCL template, and
// every file it can match is brought along.
//
// With optional (missingFileHandler Warn, Info or Debug: helmfile skips
// the file when it is missing), the layer is read only when the file
// exists: fileexists(p) ? file(p) : "" (an empty text is an empty layer).
func (c *converter) valuesFile(r *entry, name, path string, secret, optional bool) (string, bool) {
	pathText, ok := c.stringText(path, inStack)
	if !ok {
		return "", false
	}
	fn := "file"
	if secret {
		fn = "sops_file"
	}
	what := "release " + name
	if filepath.IsAbs(path) || strings.HasPrefix(filepath.Clean(path), "..") {
		c.warn("%s: %s: %s is outside the helmfile's directory: not copied; a stack reads no file outside its directory: copy it in and adjust the path", r.file, what, c.canon(path))
		return optionalLayer(fmt.Sprintf("%s(%s)", fn, pathText), pathText, optional), true
	}
	rels := []string{path}
	if placeholderRE.MatchString(path) {
		matches, _ := filepath.Glob(filepath.Join(c.dir, placeholderRE.ReplaceAllString(path, "*")))
		rels = nil
		for _, m := range matches {
			if rel, err := filepath.Rel(c.dir, m); err == nil {
				rels = append(rels, rel)
			}
		}
		if len(rels) == 0 && !optional {
			c.warn("%s: %s: no file matches %s", r.file, what, c.canon(path))
		}
	} else if optional {
		if _, err := os.Stat(filepath.Join(c.dir, path)); err != nil {
			rels = nil // missing, and helmfile skips it: nothing to copy
		}
	}
	tmpl := !secret && strings.HasSuffix(path, ".gotmpl")
	fr := newRefs()
	for _, rel := range rels {
		if !tmpl {
			if _, ok := c.copyFile(r.file, what, rel); !ok {
				return "", false
			}
			continue
		}
		rr, err := c.convertTemplate(rel)
		if err != nil {
			c.warn("%s: %s: %v", r.file, what, err)
			return "", false
		}
		fr.add(rr)
	}
	if !tmpl {
		return optionalLayer(fmt.Sprintf("%s(%s)", fn, pathText), pathText, optional), true
	}
	c.refs.add(fr)
	tplPath := strings.TrimSuffix(pathText, `.gotmpl"`) + `.tpl"`
	return optionalLayer(fmt.Sprintf("templatefile(%s, %s)", tplPath, c.templateVars(r, fr)), tplPath, optional), true
}

// optionalLayer reads a values layer only when its file exists.
func optionalLayer(layer, pathText string, optional bool) string {
	if !optional {
		return layer
	}
	return fmt.Sprintf(`fileexists(%s) ? %s : ""`, pathText, layer)
}

// templateVars passes a values template what it refers to, under the
// names it uses: var.x, environment.name, release.name and namespace.
func (c *converter) templateVars(r *entry, fr refs) string {
	var parts []string
	names := map[string]bool{}
	for k := range fr.vars {
		names[k] = true
	}
	for k := range fr.envs {
		names[k] = true
	}
	if len(names) > 0 {
		var vs []string
		for _, k := range slices.Sorted(maps.Keys(names)) {
			vs = append(vs, fmt.Sprintf("%s = var.%s", k, k))
		}
		parts = append(parts, "var = { "+strings.Join(vs, ", ")+" }")
	}
	if fr.envName {
		parts = append(parts, "environment = { name = environment.name }")
	}
	if fr.release {
		n, _ := c.hclText(r.m.get("name"), inStack, "")
		ns := `""`
		if v := r.m.get("namespace"); v != nil {
			ns, _ = c.hclText(v, inStack, "")
		}
		parts = append(parts, fmt.Sprintf("release = { name = %s, namespace = %s }", n, ns))
	}
	if len(parts) == 0 {
		return "{}"
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// convertTemplate translates a values template (name.gotmpl) into an HCL
// template (name.tpl) in the stack directory: translated expressions
// become ${...}; lines holding anything left by hand become YAML comments,
// headed by the reason. It returns what the template refers to.
func (c *converter) convertTemplate(name string) (refs, error) {
	if r, ok := c.converted[name]; ok {
		return r, nil
	}
	src, err := c.readFile(name)
	if err != nil {
		return refs{}, err
	}
	r := newRefs()
	var b strings.Builder
	last := 0
	trimNext := false
	for _, it := range wholeLines(src, c.tr.segment(src, nil)) {
		text := src[last:it.start]
		if trimNext {
			text = strings.TrimLeft(text, " \t\r\n")
		}
		if it.kind == itemExpr && it.trimLeft {
			text = strings.TrimRight(text, " \t\r\n")
		}
		b.WriteString(escapeTemplate(text))
		trimNext = it.kind == itemExpr && it.trimRight
		switch it.kind {
		case itemExpr:
			r.add(it.refs)
			switch e := it.expr; e.quote {
			case `"`:
				b.WriteString("${jsonencode(" + e.text + ")}")
			case "'":
				b.WriteString("'${" + e.text + "}'")
			default:
				b.WriteString("${" + e.text + "}")
			}
		default:
			i := len(c.items)
			line := it.line
			c.items = append(c.items, &placed{item: it, file: filepath.ToSlash(name), src: src, line: line, commented: true})
			lines := src[it.start:it.end]
			if it.kind == itemHand {
				c.leftByHand(i)
				fmt.Fprintf(&b, "# LEFT BY HAND (%s:%d, %s):\n", filepath.ToSlash(name), line, escapeTemplate(it.why))
			}
			for j, l := range strings.Split(lines, "\n") {
				if j > 0 {
					b.WriteString("\n")
				}
				b.WriteString(escapeTemplate("# " + l))
			}
		}
		last = it.end
	}
	text := src[last:]
	if trimNext {
		text = strings.TrimLeft(text, " \t\r\n")
	}
	b.WriteString(escapeTemplate(text))
	out := filepath.ToSlash(strings.TrimSuffix(filepath.Clean(name), ".gotmpl") + ".tpl")
	c.res.Files[out] = []byte(b.String())
	c.converted[name] = r
	return r, nil
}

// wholeLines widens the items of a values template that are not
// translated to whole lines, merging the items they then overlap, so a
// line is either kept (with its expressions translated) or commented out.
func wholeLines(src string, items []item) []item {
	var out []item
	for _, it := range items {
		if it.kind != itemExpr && !it.alone {
			it.start, it.end, it.alone = lineStart(src, it.start), lineEnd(src, it.end), true
		}
		for len(out) > 0 && out[len(out)-1].end > it.start {
			prev := out[len(out)-1]
			out = out[:len(out)-1]
			merged := prev
			merged.start, merged.end = min(prev.start, it.start), max(prev.end, it.end)
			switch {
			case prev.kind == itemHand:
			case it.kind == itemHand:
				merged.kind, merged.why = itemHand, it.why
			case prev.kind == itemComment && it.kind == itemComment:
			default:
				merged.kind, merged.why = itemHand, "a line with a template comment"
			}
			merged.alone = true
			it = merged
		}
		it.line = lineOf(src, it.start)
		out = append(out, it)
	}
	return out
}

// escapeTemplate escapes text for an HCL template.
func escapeTemplate(s string) string {
	s = strings.ReplaceAll(s, "${", "$${")
	return strings.ReplaceAll(s, "%{", "%%{")
}
