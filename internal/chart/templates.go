package chart

import (
	"errors"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"text/template"

	"github.com/convoy-sh/convoy/internal/chart/common"
	"github.com/convoy-sh/convoy/internal/chart/engine"
)

const (
	// maxIncludeDepth is Helm's limit on nested include of one name.
	maxIncludeDepth = 1000
	// maxNestingDepth bounds include and tpl nesting across all names.
	// Helm has no such bound: a cycle through many names or a tpl that
	// renders itself exhausts the goroutine stack and kills the process.
	// Convoy renders many releases in one process, so it fails the render.
	maxNestingDepth = 2000
	warnStart       = "HELM_ERR_START"
	warnEnd         = "HELM_ERR_END"
)

var warnRegex = regexp.MustCompile(warnStart + `((?s).*)` + warnEnd)

func warnWrap(msg string) string { return warnStart + msg + warnEnd }

// renderable is one template with the data it executes against.
type renderable struct {
	file     *File
	vals     map[string]any
	basePath string
}

// collectTemplates walks the processed tree as Helm's recAllTpls does and
// returns every template with its scoped values.
func collectTemplates(root *node, top map[string]any) map[string]renderable {
	out := map[string]renderable{}
	collectNode(root, top, out)
	return out
}

func collectNode(n *node, parentVals map[string]any, out map[string]renderable) map[string]any {
	subcharts := map[string]any{}
	meta := metadataMap(n.meta)
	meta["IsRoot"] = n.isRoot()
	next := map[string]any{
		"Chart":        meta,
		"Files":        engine.NewFiles(n.chart.filesMap()),
		"Release":      parentVals["Release"],
		"Capabilities": parentVals["Capabilities"],
		"Values":       common.Values{},
		"Subcharts":    subcharts,
	}
	if n.isRoot() {
		next["Values"] = parentVals["Values"]
	} else if pv, ok := asTable(parentVals["Values"]); ok {
		if v, ok := asTable(pv[n.name()]); ok {
			next["Values"] = v
		}
	}
	for _, d := range n.deps {
		subcharts[d.name()] = collectNode(d, next, out)
	}
	full := n.fullPath()
	for _, t := range n.chart.Templates {
		if t == nil {
			continue
		}
		if n.isLibrary() && !strings.HasPrefix(path.Base(t.Name), "_") {
			continue
		}
		out[path.Join(full, t.Name)] = renderable{file: t, vals: next, basePath: path.Join(full, "templates")}
	}
	return next
}

// asTable is Helm's tableLookup: a map or common.Values as common.Values.
func asTable(v any) (common.Values, bool) {
	switch t := v.(type) {
	case map[string]any:
		return common.Values(t), true
	case common.Values:
		return t, true
	}
	return nil, false
}

// templateOrder is Helm's parse and execution order: deeper paths first,
// then names in reverse lexical order. Later definitions of a named
// template win, so this order is observable.
func templateOrder(tpls map[string]renderable) []string {
	keys := sortedKeys(tpls)
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		ca, cb := strings.Count(a, "/"), strings.Count(b, "/")
		if ca != cb {
			return ca > cb
		}
		return a > b
	})
	return keys
}

// renderState is the per-render state of the include and tpl functions.
type renderState struct {
	included map[string]int
	depth    int
	lookup   LookupFunc
	budget   *renderBudget
	// current is the template being executed; impure the templates that
	// called a function whose result is not a function of the render's
	// inputs (impureFuncNames, lookup), and which kind.
	current string
	impure  map[string]impurity
}

// impurity is what made a template's output other than a function of the
// render's inputs: bits of impureLookup and impureVolatile.
type impurity uint8

const (
	// impureLookup: it called lookup, whose answer a plan can read again.
	impureLookup impurity = 1 << iota
	// impureVolatile: it read the clock or drew random numbers.
	impureVolatile
)

// impureFuncNames are the template functions that read the clock, draw
// random numbers or generate keys: a rendering that calls them differs
// from one made from the same inputs (lookup, which reads the cluster, is
// bound per render).
var impureFuncNames = []string{
	"now", "ago",
	"randAlphaNum", "randAlpha", "randAscii", "randNumeric", "randBytes", "randInt", "shuffle", "uuidv4",
	"genPrivateKey", "genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey", "genSignedCert", "genSignedCertWithKey",
	"bcrypt", "htpasswd", "encryptAES",
}

var impureBase = sync.OnceValue(func() map[string]reflect.Value {
	base := baseFuncs()
	out := map[string]reflect.Value{}
	for _, name := range impureFuncNames {
		if f, ok := base[name]; ok {
			out[name] = reflect.ValueOf(f)
		}
	}
	return out
})

// marking wraps f so that a call marks the current template impure.
func (s *renderState) marking(f reflect.Value) any {
	return reflect.MakeFunc(f.Type(), func(args []reflect.Value) []reflect.Value {
		s.impure[s.current] |= impureVolatile
		if f.Type().IsVariadic() {
			return f.CallSlice(args)
		}
		return f.Call(args)
	}).Interface()
}

var errNestingTooDeep = errors.New("unable to execute template")

func (s *renderState) enter(what string) error {
	if err := s.budget.check(); err != nil {
		return err
	}
	if s.depth >= maxNestingDepth {
		return fmt.Errorf("rendering template has more than %d nested include or tpl calls at %s: %w", maxNestingDepth, what, errNestingTooDeep)
	}
	s.depth++
	return nil
}

func (s *renderState) includeFunc(t *template.Template) func(string, any) (string, error) {
	return func(name string, data any) (string, error) {
		if v := s.included[name]; v > maxIncludeDepth {
			return "", fmt.Errorf("rendering template has a nested reference name: %s: %w", name, errors.New("unable to execute template"))
		}
		if err := s.enter(name); err != nil {
			return "", err
		}
		defer func() { s.depth-- }()
		s.included[name]++
		b := budgetWriter{budget: s.budget}
		err := t.ExecuteTemplate(&b, name, data)
		s.included[name]--
		return b.String(), err
	}
}

func (s *renderState) tplFunc(parent *template.Template) func(string, any) (string, error) {
	return func(text string, vals any) (string, error) {
		if err := s.enter("tpl"); err != nil {
			return "", err
		}
		defer func() { s.depth-- }()
		t, err := parent.Clone()
		if err != nil {
			return "", fmt.Errorf("cannot clone template: %w", err)
		}
		t.Option("missingkey=zero")
		t.Funcs(template.FuncMap{
			"include": s.includeFunc(t),
			"tpl":     s.tplFunc(t),
		})
		t, err = t.New(parent.Name()).Parse(text)
		if err != nil {
			return "", fmt.Errorf("cannot parse template %q: %w", text, err)
		}
		b := budgetWriter{budget: s.budget}
		if err := t.Execute(&b, vals); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %w", text, err)
		}
		return strings.ReplaceAll(b.String(), "<no value>", ""), nil
	}
}

// funcs are the functions bound to one render (and its template t).
func (s *renderState) funcs(t *template.Template) template.FuncMap {
	lookup := s.lookup
	if lookup == nil {
		lookup = offlineLookup
	}
	fm := template.FuncMap{
		"include": s.includeFunc(t),
		"tpl":     s.tplFunc(t),
		"required": func(msg string, val any) (any, error) {
			if val == nil {
				return val, errors.New(warnWrap(msg))
			}
			if str, ok := val.(string); ok && str == "" {
				return val, errors.New(warnWrap(msg))
			}
			return val, nil
		},
		"fail": func(msg string) (string, error) { return "", errors.New(warnWrap(msg)) },
		"lookup": func(apiVersion, kind, namespace, name string) (map[string]any, error) {
			s.impure[s.current] |= impureLookup
			return lookup(apiVersion, kind, namespace, name)
		},
	}
	for name, f := range impureBase() {
		fm[name] = s.marking(f)
	}
	return fm
}

// parsedSet is a parsed template set with the render-independent functions,
// cached on the loaded chart: parsing and registering ~200 functions is a
// large part of a small chart's render. Renders clone it (the parse trees
// are shared, read-only) and bind their own include, tpl, required, fail
// and lookup.
type parsedSet struct {
	t    *template.Template
	err  error
	name string // template that failed to parse
}

// templateCache maps a template set's identity to its parsedSet.
type templateCache struct{ m sync.Map }

func (c *templateCache) parsed(tpls map[string]renderable, keys []string) *parsedSet {
	var key strings.Builder
	for _, name := range keys {
		// The name and the identity of the source file: the same names
		// can come from different files when aliases shadow subcharts.
		fmt.Fprintf(&key, "%s\x00%p\x00", name, tpls[name].file)
	}
	if v, ok := c.m.Load(key.String()); ok {
		return v.(*parsedSet)
	}
	ps := parseSet(tpls, keys)
	v, _ := c.m.LoadOrStore(key.String(), ps)
	return v.(*parsedSet)
}

func parseSet(tpls map[string]renderable, keys []string) (ps *parsedSet) {
	var current string
	defer func() {
		if r := recover(); r != nil {
			ps = &parsedSet{err: &TemplateError{Template: current, Message: fmt.Sprintf("rendering template failed: %v", r)}, name: current}
		}
	}()
	t := template.New("gotpl")
	t.Option("missingkey=zero")
	t.Funcs(baseFuncs())
	for _, name := range keys {
		current = name
		if _, err := t.New(name).Parse(string(tpls[name].file.Data)); err != nil {
			return &parsedSet{err: parseError(name, err), name: name}
		}
	}
	return &parsedSet{t: t}
}

// executeTemplates parses (or reuses the parse of) and executes all
// templates, returning the output of every non-partial template by name.
// Output and time are spent from budget.
func executeTemplates(cache *templateCache, tpls map[string]renderable, lookup LookupFunc, budget *renderBudget) (out map[string]string, impure map[string]impurity, err error) {
	keys := templateOrder(tpls)
	var ps *parsedSet
	if cache != nil {
		ps = cache.parsed(tpls, keys)
	} else {
		ps = parseSet(tpls, keys)
	}
	if ps.err != nil {
		return nil, nil, ps.err
	}
	// current is the template being executed, for panics: the message
	// stays Helm's, the error still names the template.
	var current string
	defer func() {
		if r := recover(); r != nil {
			out, impure, err = nil, nil, &TemplateError{Template: current, Message: fmt.Sprintf("rendering template failed: %v", r)}
		}
	}()
	t, err := ps.t.Clone()
	if err != nil {
		return nil, nil, err
	}
	s := &renderState{included: map[string]int{}, lookup: lookup, budget: budget, impure: map[string]impurity{}}
	t.Funcs(s.funcs(t))
	out = make(map[string]string, len(keys))
	for _, name := range keys {
		if strings.HasPrefix(path.Base(name), "_") {
			continue
		}
		current, s.current = name, name
		budget.setCurrent(name)
		r := tpls[name]
		r.vals["Template"] = map[string]any{"Name": name, "BasePath": r.basePath}
		b := budgetWriter{budget: budget}
		if err := t.ExecuteTemplate(&b, name, r.vals); err != nil {
			return nil, nil, execError(name, err)
		}
		out[name] = strings.ReplaceAll(b.fitted(), "<no value>", "")
	}
	return out, s.impure, nil
}

// TemplateError is a template parse or execution failure. Message is
// Helm's text, which starts with the template file:line:col.
type TemplateError struct {
	Template string
	Message  string
	Err      error
}

func (e *TemplateError) Error() string { return e.Message }
func (e *TemplateError) Unwrap() error { return e.Err }

func parseError(name string, err error) error {
	tokens := strings.Split(err.Error(), ": ")
	if len(tokens) == 1 {
		return &TemplateError{Template: name, Message: fmt.Sprintf("parse error in (%s): %v", name, err), Err: err}
	}
	return &TemplateError{Template: name, Message: fmt.Sprintf("parse error at (%s): %s", tokens[1], tokens[len(tokens)-1]), Err: err}
}

// execError reformats a text/template execution error as Helm does.
func execError(name string, err error) error {
	var ee template.ExecError
	if !errors.As(err, &ee) {
		return &TemplateError{Template: name, Message: shortenNested(err.Error()), Err: err}
	}
	tokens := strings.SplitN(err.Error(), ": ", 3)
	if len(tokens) != 3 {
		return &TemplateError{Template: name, Message: fmt.Sprintf("execution error in (%s): %v", name, err), Err: err}
	}
	if parts := warnRegex.FindStringSubmatch(tokens[2]); len(parts) >= 2 {
		return &TemplateError{Template: name, Message: fmt.Sprintf("execution error at (%s): %s", tokens[1], parts[1]), Err: err}
	}
	var trace []traceable
	for cur := err; cur != nil; cur = errors.Unwrap(cur) {
		tr, ok := parseTraceable(cur.Error())
		if !ok {
			return &TemplateError{Template: name, Message: shortenNested(err.Error()), Err: err}
		}
		if len(trace) == 0 || trace[len(trace)-1] != tr {
			trace = append(trace, tr)
		}
	}
	var b strings.Builder
	for _, tr := range trace {
		b.WriteString(tr.String())
	}
	return &TemplateError{Template: name, Message: strings.TrimSpace(b.String()), Err: err}
}

// nestedMessageMax bounds a template error's message: text/template
// repeats every level of a runaway include or tpl recursion (2,000 levels
// made a 302 KB line), and helm prints them all.
const nestedMessageMax = 2048

// shortenNested keeps of a long chain of nested calls the two outermost
// levels (where the render entered the loop: template file and line), the
// innermost level and its cause, and says how many were left out; what is
// still too long is cut in the middle.
func shortenNested(msg string) string {
	if len(msg) <= nestedMessageMax {
		return msg
	}
	const sep = ": error calling "
	if parts := strings.Split(msg, sep); len(parts) > 4 {
		n := len(parts)
		msg = parts[0] + sep + parts[1] + sep + fmt.Sprintf("… %d nested calls left out …", n-4) + sep + parts[n-2] + sep + parts[n-1]
	}
	if len(msg) > nestedMessageMax {
		const keep = nestedMessageMax / 2
		msg = msg[:keep] + fmt.Sprintf(" … %d bytes left out … ", len(msg)-2*keep) + msg[len(msg)-keep:]
	}
	return strings.ToValidUTF8(msg, "")
}

// traceable is one level of a nested template execution error.
type traceable struct {
	location, message, function string
}

func (t traceable) String() string {
	var b strings.Builder
	if t.location != "" {
		fmt.Fprintf(&b, "%s\n  ", t.location)
	}
	if t.function != "" {
		fmt.Fprintf(&b, "%s\n    ", t.function)
	}
	if t.message != "" {
		fmt.Fprintf(&b, "%s\n", t.message)
	}
	return b.String()
}

func parseTraceable(s string) (traceable, bool) {
	rest, ok := strings.CutPrefix(s, "template: ")
	if !ok {
		return traceable{}, false
	}
	if strings.HasPrefix(rest, "no template ") {
		return traceable{message: s}, true
	}
	if name, after, found := strings.Cut(rest, ": executing "); found {
		if tr, ok := parseExecutingAt(name, after); ok {
			return tr, true
		}
	}
	if sep := strings.LastIndex(rest, ": "); sep != -1 {
		msg := rest[sep+2:]
		if cut := strings.Index(msg, " template:"); cut != -1 {
			msg = msg[:cut]
		}
		return traceable{location: rest[:sep], message: msg}, true
	}
	return traceable{}, false
}

func parseExecutingAt(name, after string) (traceable, bool) {
	if after == "" || after[0] != '"' {
		return traceable{}, false
	}
	end := strings.IndexByte(after[1:], '"')
	if end == -1 {
		return traceable{}, false
	}
	end++
	fn := after[1:end]
	afterAt, ok := strings.CutPrefix(after[end+1:], " at <")
	if !ok {
		return traceable{}, false
	}
	loc, msg, found := strings.Cut(afterAt, ">: ")
	if !found {
		return traceable{}, false
	}
	if cut := strings.Index(msg, " template:"); cut != -1 {
		msg = msg[:cut]
	}
	return traceable{location: name, message: msg, function: `executing "` + fn + `" at <` + loc + `>:`}, true
}

// metadataMap is .Chart: the metadata as a map keyed by Go field names,
// as Helm builds it by reflection.
func metadataMap(md *Metadata) map[string]any {
	maintainers := make([]any, len(md.Maintainers))
	for i, m := range md.Maintainers {
		if m == nil {
			continue
		}
		maintainers[i] = map[string]any{"Name": m.Name, "Email": m.Email, "URL": m.URL}
	}
	deps := make([]any, len(md.Dependencies))
	for i, d := range md.Dependencies {
		if d == nil {
			continue
		}
		deps[i] = map[string]any{
			"Name":         d.Name,
			"Version":      d.Version,
			"Repository":   d.Repository,
			"Condition":    d.Condition,
			"Tags":         stringsToAny(d.Tags),
			"Enabled":      d.Enabled,
			"ImportValues": append(make([]any, 0, len(d.ImportValues)), d.ImportValues...),
			"Alias":        d.Alias,
		}
	}
	return map[string]any{
		"Name":         md.Name,
		"Home":         md.Home,
		"Sources":      stringsToAny(md.Sources),
		"Version":      md.Version,
		"Description":  md.Description,
		"Keywords":     stringsToAny(md.Keywords),
		"Maintainers":  maintainers,
		"Icon":         md.Icon,
		"APIVersion":   md.APIVersion,
		"Condition":    md.Condition,
		"Tags":         md.Tags,
		"AppVersion":   md.AppVersion,
		"Deprecated":   md.Deprecated,
		"Annotations":  md.Annotations,
		"KubeVersion":  md.KubeVersion,
		"Dependencies": deps,
		"Type":         md.Type,
	}
}

func stringsToAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
