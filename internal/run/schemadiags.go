package run

import (
	"bytes"
	"cmp"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/provenance"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// schemaDiagnostics are a release's values.schema.json violations, each at
// what sets the failing value, as internal/stack/provenance places it: the key's
// line in a values file or in a heredoc, the item of a values object or
// of set / set_sensitive. A violation nothing the release sets explains (a
// chart default, a key missing at the top) is at the values attribute.
// values are the release's own values (resolve.Values).
func schemaDiagnostics(st *config.Stack, inst *config.ReleaseInstance, blk *config.Release, ch *chart.Chart, values map[string]any, se *chart.SchemaError, sensitive bool) hcl.Diagnostics {
	fallback := exprRange(blk.Values, blk.DeclRange)
	if blk.Values == nil && blk.Set != nil {
		fallback = blk.Set.Range()
	}
	mask := func(s string) string {
		if sensitive {
			return quoted.ReplaceAllString(s, "'(sensitive)'")
		}
		return s
	}
	if len(se.Violations) == 0 {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Values break the chart's schema",
			Detail:   fmt.Sprintf("%s: the values do not meet the chart's values.schema.json:\n%s", inst.Addr, mask(strings.TrimSpace(se.Message))),
			Subject:  &fallback,
		}}
	}
	// The chart coalesced the values already (ValidateValues), so
	// provenance does too; without origins every violation is at the
	// fallback.
	origins, _ := provenance.Values(st, inst, ch)
	src := newSourceFiles(st, inst, blk)
	var diags hcl.Diagnostics
	for _, v := range se.Violations {
		subject, ok := src.rangeOf(setterOf(origins, inst, src, leafPath(values, v.Path)))
		if !ok {
			subject = fallback
		}
		where := "the values"
		if len(v.Path) > 0 {
			where = setPath(v.Path)
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Values break the chart's schema",
			Detail:   fmt.Sprintf("%s: the values do not meet the chart's values.schema.json: %s (schema of chart %s): %s.", inst.Addr, where, v.Chart, mask(v.Message)),
			Subject:  &subject,
		})
	}
	return diags
}

// setPath writes a values path as Helm's --set does: keys joined by ".",
// list indices in brackets, dots in keys escaped.
func setPath(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if _, err := strconv.Atoi(p); err == nil && i > 0 {
			b.WriteString("[" + p + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strings.ReplaceAll(p, ".", `\.`))
	}
	return b.String()
}

// leafPath writes a schema violation's path as provenance (plan.Leaves)
// writes values paths: a number is a list index where values hold a list
// there, else a key. "" is the values as a whole.
func leafPath(values map[string]any, path []string) string {
	var at any = values
	out := ""
	for _, p := range path {
		if list, ok := at.([]any); ok {
			if i, err := strconv.Atoi(p); err == nil && i >= 0 && i < len(list) {
				out, at = out+"["+p+"]", list[i]
				continue
			}
		}
		out = plan.JoinKey(out, p)
		m, _ := at.(map[string]any)
		at = m[p]
	}
	return out
}

// setterOf is the origin of what the release's own values set at path or
// below it: the leaf itself, or for an object or list the leaf below it
// that the last word sets (set_sensitive, set, then the values layers
// from the last), the first written in that layer. nil when only the
// chart's defaults set it.
func setterOf(origins map[string]plan.Origin, inst *config.ReleaseInstance, src *sourceFiles, path string) *plan.Origin {
	if path == "" {
		return nil
	}
	var best *plan.Origin
	bestRank := -1
	for p, o := range origins {
		if !below(p, path) || o.Source == nil || o.Source.File == "" {
			continue
		}
		r := src.rank(inst, o)
		if r < 0 {
			continue
		}
		if r > bestRank || r == bestRank && before(o.Source, best.Source) {
			best, bestRank = &o, r
		}
	}
	return best
}

// below says whether p is path or a path under it.
func below(p, path string) bool {
	rest, ok := strings.CutPrefix(p, path)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

func before(a, b *plan.Source) bool {
	return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column)) < 0
}

// sourceFiles knows the files origins name: the stack's HCL files and the
// values files its release reads, by the names origins give them, with
// their text.
type sourceFiles struct {
	dir   string            // the stack directory, absolute
	given string            // the stack directory as the run was given it
	names map[string]string // as origins name a file → as diagnostics do
	text  map[string][]byte // by the diagnostics' name
	// sensitive are the layers of values files whose text is sensitive:
	// a diagnostic in the file would show the line.
	sensitive map[string]hcl.Range
	// items are the items of the release's values, set and set_sensitive
	// objects written literally, by where their keys start.
	items map[filePos]hcl.Range
	// layers are the values layers' expressions and the set and
	// set_sensitive attributes', by where they start.
	layers map[filePos]hcl.Range
}

// filePos is a position as origins give it: no byte offset.
type filePos struct {
	file         string
	line, column int
}

func posOf(file string, p hcl.Pos) filePos { return filePos{file, p.Line, p.Column} }

func newSourceFiles(st *config.Stack, inst *config.ReleaseInstance, blk *config.Release) *sourceFiles {
	s := &sourceFiles{names: map[string]string{}, text: map[string][]byte{}, sensitive: map[string]hcl.Range{}, items: map[filePos]hcl.Range{}, layers: map[filePos]hcl.Range{}}
	s.dir, _ = filepath.Abs(st.Dir)
	s.given = st.Dir
	if cfg := st.Source(); cfg != nil {
		for name, f := range cfg.Files {
			s.names[s.show(name)] = name
			s.text[name] = f.Bytes
		}
	}
	for _, l := range inst.Values {
		s.layers[posOf(l.Range.Filename, l.Range.Start)] = l.Range
		if l.File == "" {
			continue
		}
		text, marks := l.Value.Unmark()
		name := s.diagName(l.File)
		s.names[s.show(l.File)] = name
		if text.IsKnown() && !text.IsNull() {
			s.text[name] = []byte(text.AsString())
		}
		if len(marks) > 0 {
			s.sensitive[name] = l.Range
		}
	}
	for _, expr := range []hcl.Expression{blk.Values, blk.Set, blk.SetSensitive} {
		if expr != nil && expr != blk.Values {
			r := expr.Range()
			s.layers[posOf(r.Filename, r.Start)] = r
		}
		node, ok := expr.(hclsyntax.Node)
		if !ok {
			continue
		}
		_ = hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
			if obj, ok := n.(*hclsyntax.ObjectConsExpr); ok {
				for _, item := range obj.Items {
					k := item.KeyExpr.Range()
					s.items[posOf(k.Filename, k.Start)] = hcl.RangeBetween(k, item.ValueExpr.Range())
				}
			}
			return nil
		})
	}
	return s
}

// show is a file name as provenance names it: relative to the stack
// directory when inside it, else as given.
func (s *sourceFiles) show(name string) string {
	abs, err := filepath.Abs(name)
	if err != nil {
		return name
	}
	if rel, err := filepath.Rel(s.dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return name
}

// diagName is a values file's name as diagnostics give it: the stack's
// HCL files are named under the stack directory as the run was given it
// (stack/stack.hcl for -C stack), so a file inside the stack directory is
// too (stack/values/web.yaml), not by its absolute path.
func (s *sourceFiles) diagName(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return file
	}
	rel, err := filepath.Rel(s.dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return file
	}
	return filepath.Join(s.given, rel)
}

// rank orders origins by who has the last word: set_sensitive over set
// over the values layers, a later layer over an earlier one; -1 for what
// the release does not set (a chart default).
func (s *sourceFiles) rank(inst *config.ReleaseInstance, o plan.Origin) int {
	n := len(inst.Values)
	switch o.Kind {
	case plan.OriginSetSensitive:
		return n + 1
	case plan.OriginSet:
		return n
	case plan.OriginValuesFile, plan.OriginValues:
		name := s.names[o.Source.File]
		pos := hcl.Pos{Line: o.Source.Line, Column: o.Source.Column}
		for i := n - 1; i >= 0; i-- {
			l := inst.Values[i]
			if o.Kind == plan.OriginValuesFile && l.File != "" && s.diagName(l.File) == name ||
				o.Kind == plan.OriginValues && l.Range.Filename == name && contains(l.Range, pos) {
				return i
			}
		}
		return 0
	}
	return -1
}

func contains(r hcl.Range, p hcl.Pos) bool {
	after := p.Line > r.Start.Line || p.Line == r.Start.Line && p.Column >= r.Start.Column
	notPast := p.Line < r.End.Line || p.Line == r.End.Line && p.Column <= r.End.Column
	return after && notPast
}

// rangeOf is the range a diagnostic at o points at: an item of an object
// written literally (key to value) or a values layer where one starts
// there, else from there to the end of the line. A values file whose text
// is sensitive is pointed at by its layer.
func (s *sourceFiles) rangeOf(o *plan.Origin) (hcl.Range, bool) {
	if o == nil || o.Source == nil {
		return hcl.Range{}, false
	}
	name, ok := s.names[o.Source.File]
	if !ok {
		return hcl.Range{}, false
	}
	if r, ok := s.sensitive[name]; ok {
		return r, true
	}
	at := filePos{name, o.Source.Line, o.Source.Column}
	if r, ok := s.items[at]; ok {
		return r, true
	}
	if r, ok := s.layers[at]; ok {
		return r, true
	}
	text, ok := s.text[name]
	if !ok {
		return hcl.Range{}, false
	}
	return lineRange(name, text, o.Source.Line, o.Source.Column)
}

// lineRange is the range in file (whose text is text) from line:col to
// the end of that line.
func lineRange(file string, text []byte, line, col int) (hcl.Range, bool) {
	start := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(text[start:], '\n')
		if i < 0 {
			return hcl.Range{}, false
		}
		start += i + 1
	}
	lineText := text[start:]
	if i := bytes.IndexByte(lineText, '\n'); i >= 0 {
		lineText = lineText[:i]
	}
	lineText = bytes.TrimRight(lineText, " \t\r")
	from := 0
	for c := 1; c < col && from < len(lineText); c++ {
		_, size := utf8.DecodeRune(lineText[from:])
		from += size
	}
	return hcl.Range{
		Filename: file,
		Start:    hcl.Pos{Line: line, Column: col, Byte: start + from},
		End:      hcl.Pos{Line: line, Column: col + utf8.RuneCount(lineText[from:]), Byte: start + len(lineText)},
	}, true
}
