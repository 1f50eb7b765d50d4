package planner

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/chart/postrender"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// minDerivedLen is the shortest value derived from a sensitive one that is
// masked wherever it occurs in text. Shorter ones ("true", "8080") are
// masked only in the fields they were rendered into: searching for them in
// text would mask unrelated words and protect little.
const minDerivedLen = 6

// A template may transform a sensitive value (upper, trunc, sha256sum,
// b64enc | b64enc) into a string that matches none of the sensitive
// strings. To find those, the release is rendered a second time with every
// sensitive input replaced by a placeholder of the same shape: a field whose
// value differs between the two renders depends on a sensitive value. Its
// rendered value is then sensitive too, and the field is masked in every
// diff of its object whatever its value (the live object holds what an
// older secret rendered to). Fields that differ between two renders with
// the same inputs (randAlphaNum, now, genCA) are not taken for secrets: when
// a differing field holds no known sensitive string, a third render with the
// real inputs tells them apart. Cost: one render more per release with
// sensitive values, two when a template transforms one.

// derived is what a release's rendering derives from its sensitive values.
type derived struct {
	// values are rendered strings that depend on a sensitive value and
	// contain none of the known sensitive strings.
	values []string
	fields sensitive.Fields
	// warning says why the fields could not be found.
	warning string
}

// secretDerived finds what rendered depends on the sensitive values red
// knows, by rendering req again with placeholders (and, if needed, with the
// real values once more) as revision would be rendered.
func (c *computer) secretDerived(ctx context.Context, rd *release.Renderer, req *release.Request, revision int, install bool, rendered *chart.Rendered, red *sensitive.Redactor) (*derived, error) {
	out := &derived{fields: sensitive.Fields{}}
	masked, changed := placeholders(req.Values, red)
	if !changed {
		return out, nil
	}
	action := chart.ActionUpgrade
	if install {
		action = chart.ActionInstall
	}
	opts := rd.RenderOptions(ctx, req, revision, action)
	opts.Lookup = sharedLookup(opts.Lookup)
	render := func(values map[string]any) (*chart.Rendered, error) {
		o := opts
		o.UserValues = values
		var r *chart.Rendered
		err := c.do(ctx, func() error {
			var err error
			if r, err = chart.Render(req.Chart, o); err != nil {
				return err
			}
			// Compared with the real rendering, which is post-rendered.
			return postrender.Apply(ctx, r, req.Namespace, req.PostRender)
		})
		return r, err
	}
	other, err := render(masked.(map[string]any))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out.warning = fmt.Sprintf("fields computed from sensitive values cannot be told apart (the chart does not render with placeholders for them: %s): only the sensitive values themselves are masked", red.Text(err.Error()))
		return out, nil
	}
	realDocs, otherDocs := renderedDocs(rendered), indexDocs(renderedDocs(other))
	type candidate struct {
		doc    *renderedDoc
		change *plan.Change
		held   bool
	}
	var cands []candidate
	recheck := false
	for i := range realDocs {
		doc := &realDocs[i]
		o, ok := otherDocs[doc.key]
		if !ok {
			continue
		}
		d := plan.Compare(doc.value, o.value)
		if d == nil {
			continue
		}
		for _, ch := range d.Changes {
			held := ch.Before != nil && red.Holds(ch.Before)
			recheck = recheck || !held
			cands = append(cands, candidate{doc: doc, change: ch, held: held})
		}
	}
	// Which fields change between two renders of the same inputs.
	var unstable map[string][]string
	if recheck {
		again, err := render(req.Values)
		if err != nil {
			return nil, err
		}
		unstable = map[string][]string{}
		againDocs := indexDocs(renderedDocs(again))
		for _, doc := range realDocs {
			a, ok := againDocs[doc.key]
			if !ok {
				unstable[doc.key] = []string{""}
				continue
			}
			if d := plan.Compare(doc.value, a.value); d != nil {
				for _, ch := range d.Changes {
					unstable[doc.key] = append(unstable[doc.key], ch.Path)
				}
			}
		}
	}
	byObject := map[*renderedDoc][]string{}
	var docs []*renderedDoc
	for _, cd := range cands {
		if !cd.held && overlaps(unstable[cd.doc.key], cd.change.Path) {
			continue
		}
		if cd.doc.kind != "" {
			if _, ok := byObject[cd.doc]; !ok {
				docs = append(docs, cd.doc)
			}
			byObject[cd.doc] = append(byObject[cd.doc], cd.change.Path)
		}
		if !cd.held {
			out.values = appendLeaves(out.values, cd.change.Before, red)
		}
	}
	for _, doc := range docs {
		out.fields.Add(doc.group, doc.kind, doc.namespace, doc.name, byObject[doc])
	}
	slices.Sort(out.values)
	out.values = slices.Compact(out.values)
	return out, nil
}

// overlaps reports whether path is one of paths, below one, or above one.
func overlaps(paths []string, path string) bool {
	for _, p := range paths {
		if p == "" || plan.HasPrefix(path, p) || plan.HasPrefix(p, path) {
			return true
		}
	}
	return false
}

// appendLeaves appends the strings in v that are long enough to be
// searched for in text and hold no known sensitive string.
func appendLeaves(out []string, v any, red *sensitive.Redactor) []string {
	switch t := v.(type) {
	case string:
		if len(t) >= minDerivedLen && !red.Holds(t) {
			out = append(out, t)
		}
	case map[string]any:
		for _, e := range t {
			out = appendLeaves(out, e, red)
		}
	case []any:
		for _, e := range t {
			out = appendLeaves(out, e, red)
		}
	}
	return out
}

// renderedDoc is one rendered document, decoded.
type renderedDoc struct {
	// key pairs the documents of two renders: the template and the
	// document's position among those of its template.
	key                          string
	group, kind, namespace, name string
	value                        any
}

// renderedDocs decodes every resource and hook document of r. A document
// that does not decode is compared as text.
func renderedDocs(r *chart.Rendered) []renderedDoc {
	var out []renderedDoc
	seen := map[string]int{}
	add := func(prefix, path, content string) *renderedDoc {
		k := prefix + path
		n := seen[k]
		seen[k]++
		d := renderedDoc{key: fmt.Sprintf("%s#%d", k, n), value: decodeDoc(content)}
		out = append(out, d)
		return &out[len(out)-1]
	}
	for _, m := range r.Manifests {
		d := add("manifest:", m.Path, m.Document())
		gv, _ := schema.ParseGroupVersion(m.APIVersion)
		d.group, d.kind, d.namespace, d.name = gv.Group, m.Kind, m.Namespace, m.Name
	}
	for _, h := range r.Hooks {
		add("hook:", h.Path, h.Manifest)
	}
	return out
}

// decodeDoc is a rendered document decoded, or its text when it does not
// decode.
func decodeDoc(content string) any {
	var v any
	if err := yaml.Unmarshal([]byte(content), &v); err != nil {
		return content
	}
	return v
}

func indexDocs(docs []renderedDoc) map[string]*renderedDoc {
	m := make(map[string]*renderedDoc, len(docs))
	for i := range docs {
		m[docs[i].key] = &docs[i]
	}
	return m
}

// placeholders returns a copy of values with every sensitive string
// replaced by a placeholder of the same shape (shifted), and every
// occurrence of one inside a longer string too; numbers whose decimal form
// is sensitive get other digits. changed says whether anything was
// replaced.
func placeholders(v any, red *sensitive.Redactor) (any, bool) {
	switch t := v.(type) {
	case string:
		if red.Is(t) {
			s := shift(t)
			return s, s != t
		}
		s := t
		for _, n := range red.Needles() {
			s = strings.ReplaceAll(s, n, shift(n))
		}
		return s, s != t
	case int64:
		if red.Is(strconv.FormatInt(t, 10)) {
			if n, err := strconv.ParseInt(shift(strconv.FormatInt(t, 10)), 10, 64); err == nil && n != t {
				return n, true
			}
		}
	case int:
		if red.Is(strconv.Itoa(t)) {
			if n, err := strconv.Atoi(shift(strconv.Itoa(t))); err == nil && n != t {
				return n, true
			}
		}
	case float64:
		text := strconv.FormatFloat(t, 'f', -1, 64)
		if red.Is(text) {
			if f, err := strconv.ParseFloat(shift(text), 64); err == nil && f != t {
				return f, true
			}
		}
	case map[string]any:
		out := make(map[string]any, len(t))
		changed := false
		for k, e := range t {
			var c bool
			out[k], c = placeholders(e, red)
			changed = changed || c
		}
		return out, changed
	case []any:
		out := make([]any, len(t))
		changed := false
		for i, e := range t {
			var c bool
			out[i], c = placeholders(e, red)
			changed = changed || c
		}
		return out, changed
	}
	return v, false
}

// shift replaces every ASCII letter and digit by the next one of its
// class, keeping length, case, and hexadecimal and base64 strings such:
// 0-9, a-f, g-z, A-F and G-Z each rotate within themselves.
func shift(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			b[i] = '0' + (c-'0'+1)%10
		case c >= 'a' && c <= 'f':
			b[i] = 'a' + (c-'a'+1)%6
		case c >= 'g' && c <= 'z':
			b[i] = 'g' + (c-'g'+1)%20
		case c >= 'A' && c <= 'F':
			b[i] = 'A' + (c-'A'+1)%6
		case c >= 'G' && c <= 'Z':
			b[i] = 'G' + (c-'G'+1)%20
		}
	}
	return string(b)
}

// sharedLookup answers each lookup once: the renders of one release see the
// same cluster. Each call gets its own copy (templates may modify it).
func sharedLookup(f chart.LookupFunc) chart.LookupFunc {
	type answer struct {
		obj map[string]any
		err error
	}
	var mu sync.Mutex
	seen := map[[4]string]answer{}
	return func(apiVersion, kind, namespace, name string) (map[string]any, error) {
		k := [4]string{apiVersion, kind, namespace, name}
		mu.Lock()
		a, ok := seen[k]
		mu.Unlock()
		if !ok {
			a.obj, a.err = f(apiVersion, kind, namespace, name)
			mu.Lock()
			seen[k] = a
			mu.Unlock()
		}
		obj, _ := copyJSON(a.obj).(map[string]any)
		return obj, a.err
	}
}

func copyJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyJSON(e)
		}
		return out
	}
	return v
}
