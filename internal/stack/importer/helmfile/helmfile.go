// Package helmfile converts a helmfile into a convoy stack: the stack's
// HCL and the values files it reads, with a warning for everything it
// cannot carry over.
//
// It reads helmfiles as helmfile v1 does: `bases` are read and merged
// first, in order, and `---`-separated parts are merged in order (a later
// part's non-empty lists replace an earlier part's). Go templates are
// translated where a translation exists ({{ .Environment.Name }},
// {{ .Values.x }}, {{ requiredEnv "X" }}, quote, default, printf, ...); the
// rest is kept as comments at the place it stood and listed, one item per
// template, as left by hand.
package helmfile

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Result is a converted stack: files by path relative to the stack
// directory (stack.hcl and the values files), and what was not converted.
type Result struct {
	Files map[string][]byte
	// LeftByHand lists, one line each, what the stack still needs by hand:
	// templates kept as comments and helmfile features with no translation.
	// The same list heads stack.hcl as a comment block.
	LeftByHand []string
}

// placed is one template item of a file the converter read.
type placed struct {
	item item
	file string // the file, relative to the helmfile's directory
	src  string // the text the item's offsets refer to
	line int    // the item's line in file
	refs refs
	why  string // why it is left by hand, when a scope refused it
	// noted: listed in LeftByHand already; commented: kept as a comment
	noted, commented bool
}

type converter struct {
	dir   string // the helmfile's directory
	res   *Result
	items []*placed
	tr    translator
	// refs: what the stack's expressions refer to (variables to declare)
	refs refs
	// converted: the values templates translated, and what they refer to
	converted map[string]refs
	// inline: the items left by hand written inside the values of the
	// release being written (each release that merges a template writes
	// them again; they are listed once)
	inline map[int]bool
	// localCharts: the releases of each local chart path, for one note
	// per chart however many releases (or templates) name it
	localCharts map[string][]string
}

// Convert reads the helmfile at path.
func Convert(path string) (*Result, error) {
	c := &converter{dir: filepath.Dir(path), res: &Result{Files: map[string][]byte{}}, refs: newRefs(), converted: map[string]refs{}, inline: map[int]bool{}, localCharts: map[string][]string{}}
	st, err := c.loadFile(filepath.Base(path), true)
	if err != nil {
		return nil, err
	}
	c.res.Files["stack.hcl"] = c.emit(st, filepath.Base(path))
	return c.res, nil
}

func (c *converter) warn(format string, args ...any) {
	c.res.LeftByHand = append(c.res.LeftByHand, fmt.Sprintf(format, args...))
}

// leftByHand lists item i once.
func (c *converter) leftByHand(i int) {
	p := c.items[i]
	if p.noted || p.item.kind == itemComment {
		return
	}
	p.noted = true
	why := p.why
	if why == "" {
		why = p.item.why
	}
	c.warn("%s:%d: %s: %s", p.file, p.line, firstLine(p.item.text(p.src)), why)
}

// noteComment is item i as comment lines: the reason, then its source.
func (c *converter) noteComment(i int, indent string) string {
	p := c.items[i]
	p.commented = true
	src := p.src[lineStart(p.src, p.item.start):lineEnd(p.src, p.item.end)]
	if p.item.kind == itemComment {
		return commentLines(strings.TrimSpace(src), indent)
	}
	c.leftByHand(i)
	why := p.why
	if why == "" {
		why = p.item.why
	}
	return commentLines(fmt.Sprintf("LEFT BY HAND (%s:%d, %s):\n%s", p.file, p.line, why, dedent(src)), indent)
}

func firstLine(s string) string {
	l, _, more := strings.Cut(s, "\n")
	if more {
		l += " ..."
	}
	return l
}

// dedent removes the indentation common to the lines of s.
func dedent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if common < 0 || n < common {
			common = n
		}
	}
	for i, l := range lines {
		if len(l) >= common && common > 0 {
			lines[i] = l[common:]
		}
	}
	return strings.Join(lines, "\n")
}

// loadFile reads a helmfile (the main one, or a base) and merges its parts.
// name is relative to the helmfile's directory.
func (c *converter) loadFile(name string, main bool) (*state, error) {
	b, err := c.readFile(name)
	if err != nil {
		return nil, err
	}
	content := strings.ReplaceAll(b, "\r\n", "\n")
	parts := strings.Split(content, "\n---\n")
	var final *state
	line := 1
	carry := ""
	for i, p := range parts {
		if carry != "" {
			p = carry + "\n---\n" + p
			carry = ""
		}
		if i < len(parts)-1 && directivesOnly(p) {
			// %YAML 1.1 (or %TAG) then ---: the directives belong to the
			// document the --- starts, not to a part of their own.
			carry = p
			continue
		}
		st, err := c.loadPart(name, p, line, main)
		if err != nil {
			return nil, err
		}
		line += strings.Count(p, "\n") + 2
		if final == nil {
			final = st
		} else {
			final.overrideWith(st)
		}
	}
	return final, nil
}

// directivesOnly reports whether a part holds only YAML directives
// (%YAML, %TAG), comments and blank lines.
func directivesOnly(p string) bool {
	seen := false
	for l := range strings.SplitSeq(p, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
		case strings.HasPrefix(t, "%"):
			seen = true
		default:
			return false
		}
	}
	return seen
}

// loadPart reads one part of a helmfile, and its bases.
func (c *converter) loadPart(file, src string, firstLine int, main bool) (*state, error) {
	from := len(c.items)
	yamlSrc := c.placeholders(file, src, firstLine)
	v, err := parseYAML(yamlSrc)
	if err != nil {
		return nil, fmt.Errorf("%s: part at line %d: %w", file, firstLine, err)
	}
	locate(v, file, firstLine)
	top, ok := v.(*omap)
	if v != nil && !ok {
		return nil, fmt.Errorf("%s: part at line %d is not a mapping", file, firstLine)
	}
	if top == nil {
		top = newOmap()
	}
	st := c.readState(file, top, firstLine)
	c.placeNotes(st, src, from, top)
	bases, _ := top.get("bases").([]any)
	if len(bases) == 0 {
		return st, nil
	}
	if !main {
		return nil, fmt.Errorf("%s: a base cannot have bases (helmfile refuses nested bases too)", file)
	}
	var merged *state
	for _, b := range bases {
		name, ok := str(b)
		if !ok || placeholderRE.MatchString(name) {
			c.warn("%s: bases: %v is not a plain path: not read", file, b)
			continue
		}
		base, err := c.loadFile(filepath.Clean(name), false)
		if err != nil {
			return nil, fmt.Errorf("%s: bases: %w", file, err)
		}
		if merged == nil {
			merged = base
		} else {
			merged.appendWith(base)
		}
	}
	if merged == nil {
		return st, nil
	}
	merged.appendWith(st)
	return merged, nil
}

// placeholders replaces the template items of a helmfile part: translated
// expressions and inline items by placeholders, items alone on their lines
// by as many empty lines, so the YAML keeps its line numbers.
func (c *converter) placeholders(file, src string, firstLine int) string {
	items := c.tr.segment(src, inStack.allows)
	var b strings.Builder
	last := 0
	for _, it := range items {
		if it.kind == itemExpr && alone(src, it.start, it.end) && !valuePosition(src, it.start) {
			// An expression alone on its line, not a value: it splices YAML
			// (toYaml | nindent) into the mapping or list around it.
			it.kind, it.why = itemHand, "it splices YAML into what surrounds it: merge it by hand"
			it.alone, it.start, it.end = true, lineStart(src, it.start), lineEnd(src, it.end)
		}
		b.WriteString(src[last:it.start])
		i := len(c.items)
		c.items = append(c.items, &placed{item: it, file: file, src: src, line: firstLine + it.line - 1, refs: it.refs})
		switch {
		case it.alone:
			b.WriteString(strings.Repeat("\n", strings.Count(src[it.start:it.end], "\n")))
		case it.kind == itemComment:
		default:
			b.WriteString(placeholder(i))
		}
		last = it.end
	}
	b.WriteString(src[last:])
	return b.String()
}

// valuePosition reports whether the line holding off is a value: the
// line above it (blank lines aside) ends with "key:" or "-".
func valuePosition(src string, off int) bool {
	above := strings.TrimRight(src[:lineStart(src, off)], " \t\r\n")
	prev := strings.TrimSpace(above[lineStart(above, len(above)):])
	return strings.HasSuffix(prev, ":") || prev == "-"
}

// Write writes the files under dir, which must not hold a stack.hcl yet.
func (r *Result) Write(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "stack.hcl")); err == nil {
		return fmt.Errorf("%s already holds a stack.hcl: choose an empty directory", dir)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Files)) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, r.Files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
