package helmfile

import (
	"slices"
	"strings"
)

// state is a helmfile as read: its parts and bases merged. Notes are
// template items (indexes into the converter's items) kept as comments,
// anchored where they stood.
type state struct {
	repos    []*entry
	defaults *omap
	envs     map[string]*env
	releases []*entry

	// notes outside releases: before the environments, before the
	// repositories, before the releases, at the end
	envNotes, repoNotes, topNotes, endNotes []int
}

// entry is a repository or a release: its mapping, the file it came from
// and the notes anchored to it.
type entry struct {
	m      *omap
	file   string
	before []int            // notes before its block
	after  map[string][]int // notes after the attribute of a key
	end    []int            // notes at the end of its block
}

type env struct {
	file    string
	values  []any
	secrets []any
	other   []string
}

// readState reads one part; firstLine is the part's first line in file.
func (c *converter) readState(file string, top *omap, firstLine int) *state {
	st := &state{defaults: newOmap(), envs: map[string]*env{}}
	at := func(line int) int { return firstLine + line - 1 }
	for _, k := range top.keys {
		v := top.vals[k]
		switch k {
		case "bases":
		case "repositories", "releases":
			l, _ := v.([]any)
			for _, x := range l {
				m, ok := x.(*omap)
				if !ok {
					c.warn("%s:%d: %s: an entry is not a mapping: not imported", file, at(top.lines[k]), k)
					continue
				}
				e := &entry{m: m, file: file, after: map[string][]int{}}
				if k == "repositories" {
					st.repos = append(st.repos, e)
				} else {
					st.releases = append(st.releases, e)
				}
			}
		case "helmDefaults":
			if m, ok := v.(*omap); ok {
				st.defaults = m
				for _, dk := range m.keys {
					if _, ok := flagAttrs[dk]; !ok {
						c.warn("%s:%d: helmDefaults: %s is not imported", file, at(m.lines[dk]), dk)
					}
				}
			}
		case "environments":
			m, _ := v.(*omap)
			if m == nil {
				continue
			}
			for _, name := range m.keys {
				e := &env{file: file}
				spec, _ := m.vals[name].(*omap)
				if spec != nil {
					e.values, _ = spec.get("values").([]any)
					e.secrets, _ = spec.get("secrets").([]any)
					for _, sk := range spec.keys {
						if sk != "values" && sk != "secrets" {
							e.other = append(e.other, sk)
						}
					}
				}
				st.envs[name] = e
			}
		case "templates":
			// Release templates reach the releases through YAML anchors
			// (<<: *name), merged as the YAML is read; the templates they
			// hold for helmfile's second rendering are resolved per release
			// (releaseTemplates).
		default:
			c.warn("%s:%d: top-level %q is not imported", file, at(top.lines[k]), k)
		}
	}
	return st
}

// appendWith merges a later layer as helmfile merges bases: lists are
// appended, helmDefaults keys overridden, each environment's values and
// secrets appended.
func (st *state) appendWith(o *state) {
	st.repos = append(st.repos, o.repos...)
	st.releases = append(st.releases, o.releases...)
	for _, k := range o.defaults.keys {
		st.defaults.set(k, o.defaults.vals[k], o.defaults.lines[k])
	}
	for name, e := range o.envs {
		if d, ok := st.envs[name]; ok {
			d.values = append(slices.Clone(d.values), e.values...)
			d.secrets = append(slices.Clone(d.secrets), e.secrets...)
			d.other = append(d.other, e.other...)
		} else {
			st.envs[name] = e
		}
	}
	st.addNotes(o)
}

// overrideWith merges a later part of one file as helmfile does: its
// non-empty lists replace the earlier ones, its environments replace the
// same-named ones, its helmDefaults keys override.
func (st *state) overrideWith(o *state) {
	if len(o.repos) > 0 {
		st.repos = o.repos
	}
	if len(o.releases) > 0 {
		for _, r := range st.releases {
			st.endNotes = append(st.endNotes, r.allNotes()...)
		}
		st.releases = o.releases
	}
	for _, k := range o.defaults.keys {
		st.defaults.set(k, o.defaults.vals[k], o.defaults.lines[k])
	}
	for name, e := range o.envs {
		st.envs[name] = e
	}
	st.addNotes(o)
}

func (st *state) addNotes(o *state) {
	st.envNotes = append(st.envNotes, o.envNotes...)
	st.repoNotes = append(st.repoNotes, o.repoNotes...)
	st.topNotes = append(st.topNotes, o.topNotes...)
	st.endNotes = append(st.endNotes, o.endNotes...)
}

func (e *entry) allNotes() []int {
	out := slices.Clone(e.before)
	for _, k := range e.m.keys {
		out = append(out, e.after[k]...)
	}
	return append(out, e.end...)
}

// placeNotes anchors the items of a part that stood alone on their lines
// (those from index from on) by their line: inside a release (after the
// key above them), between releases, or in a top-level section.
func (c *converter) placeNotes(st *state, src string, from int, top *omap) {
	keyLines := make([]int, len(top.keys))
	for i, k := range top.keys {
		keyLines[i] = top.lines[k]
	}
	sectionOf := func(line int) string {
		s := ""
		for i, k := range top.keys {
			if keyLines[i] <= line {
				s = k
			}
		}
		return s
	}
	nextTop := func(line int) int {
		for _, l := range keyLines {
			if l > line {
				return l
			}
		}
		return 1 << 30
	}
	for i := from; i < len(c.items); i++ {
		p := c.items[i]
		if !p.item.alone {
			continue
		}
		line := p.item.line
		indent := indentOf(src, p.item.start)
		section := sectionOf(line)
		if k := keyBelow(src, p.item.end, top, keyLines); k != "" && indent == 0 {
			// unindented right above a key: it belongs to that key's section
			section = k
		}
		switch section {
		case "releases":
			if r, k := findEntry(st.releases, src, line, indent, nextTop(line)); r != nil {
				if k != "" {
					r.after[k] = append(r.after[k], i)
				} else {
					r.before = append(r.before, i)
				}
				continue
			}
			st.endNotes = append(st.endNotes, i)
		case "repositories":
			st.repoNotes = append(st.repoNotes, i)
		case "environments":
			st.envNotes = append(st.envNotes, i)
		default:
			if l, ok := top.lines["releases"]; !ok || l > line {
				st.topNotes = append(st.topNotes, i)
			} else {
				st.endNotes = append(st.endNotes, i)
			}
		}
	}
}

// keyBelow is the top-level key that follows the text ending at off, when
// nothing but blank lines and comments stand between them.
func keyBelow(src string, off int, top *omap, keyLines []int) string {
	endLine := lineOf(src, off)
	lines := strings.Split(src, "\n")
	for i, l := range keyLines {
		if l <= endLine {
			continue
		}
		for _, between := range lines[endLine:min(l-1, len(lines))] {
			if t := strings.TrimSpace(between); t != "" && !strings.HasPrefix(t, "#") {
				return ""
			}
		}
		return top.keys[i]
	}
	return ""
}

// findEntry finds where a line of the releases list belongs: inside an
// entry (the key it follows) when indented at least as its keys, else
// before the next entry.
func findEntry(entries []*entry, src string, line, indent, limit int) (*entry, string) {
	for i, e := range entries {
		if len(e.m.keys) == 0 {
			continue
		}
		start := e.m.lines[e.m.keys[0]]
		end := limit
		if i+1 < len(entries) && len(entries[i+1].m.keys) > 0 {
			end = entries[i+1].m.lines[entries[i+1].m.keys[0]]
		}
		if line < start {
			return e, ""
		}
		if line >= end {
			continue
		}
		if indent < keyColumn(src, start) {
			if i+1 < len(entries) {
				return entries[i+1], ""
			}
			return nil, ""
		}
		key := e.m.keys[0]
		for _, k := range e.m.keys {
			if e.m.lines[k] <= line {
				key = k
			}
		}
		return e, key
	}
	return nil, ""
}

// indentOf is the indentation of the line holding off.
func indentOf(src string, off int) int {
	l := src[lineStart(src, off):lineEnd(src, off)]
	return len(l) - len(strings.TrimLeft(l, " \t"))
}

// keyColumn is the column of the first key of a list entry starting on
// line ("  - name: x" → 4).
func keyColumn(src string, line int) int {
	lines := strings.Split(src, "\n")
	if line-1 >= len(lines) {
		return 0
	}
	l := lines[line-1]
	n := len(l) - len(strings.TrimLeft(l, " \t"))
	rest := l[n:]
	for strings.HasPrefix(rest, "-") {
		rest = rest[1:]
		n++
		m := len(rest) - len(strings.TrimLeft(rest, " \t"))
		rest = rest[m:]
		n += m
	}
	return n
}
