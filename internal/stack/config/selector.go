package config

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Selector is one -l argument, as helmfile's: comma-separated terms that
// must all hold, each key=value (the release's label is value) or
// key!=value (it is not). Several selectors select what any of them
// selects.
type Selector struct {
	Text  string
	Terms []SelectorTerm
}

// SelectorTerm is one key=value or key!=value.
type SelectorTerm struct {
	Key, Value string
	Not        bool
}

// ParseSelector parses "tier=api,env!=dev".
func ParseSelector(text string) (Selector, error) {
	sel := Selector{Text: text}
	for _, part := range strings.Split(text, ",") {
		part = strings.TrimSpace(part)
		term := SelectorTerm{}
		k, v, ok := strings.Cut(part, "!=")
		if ok {
			term.Not = true
		} else if k, v, ok = strings.Cut(part, "="); !ok {
			return Selector{}, fmt.Errorf("invalid selector %q: each term is key=value or key!=value", text)
		}
		term.Key, term.Value = strings.TrimSpace(k), strings.TrimSpace(v)
		if term.Key == "" {
			return Selector{}, fmt.Errorf("invalid selector %q: a term has no key", text)
		}
		sel.Terms = append(sel.Terms, term)
	}
	return sel, nil
}

// Matches reports whether every term holds for labels. A missing label
// differs from every value.
func (sel Selector) Matches(labels map[string]string) bool {
	for _, t := range sel.Terms {
		v, ok := labels[t.Key]
		if (ok && v == t.Value) == t.Not {
			return false
		}
	}
	return true
}

// SelectorLabels are the labels selectors see on a release instance: its
// labels, plus name, namespace and chart (as helmfile) unless it sets them.
func (ri *ReleaseInstance) SelectorLabels() map[string]string {
	out := map[string]string{"name": ri.Name, "namespace": ri.Namespace, "chart": ri.Chart}
	for k, v := range ri.Labels {
		out[k] = v
	}
	return out
}

// Select returns the instances any selector matches, in address order. A
// selector that matches nothing is an error: it is most likely mistyped.
func (s *Stack) Select(selectors []string) ([]ReleaseInstanceAddr, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	seen := map[ReleaseInstanceAddr]bool{}
	var out []ReleaseInstanceAddr
	for _, text := range selectors {
		sel, err := ParseSelector(text)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid selector", Detail: err.Error() + "."})
			continue
		}
		matched := s.collect(&out, seen, func(ri *ReleaseInstance) bool { return sel.Matches(ri.SelectorLabels()) })
		if !matched {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "No release selected",
				Detail:   fmt.Sprintf("The selector -l %s matches no release instance of the stack (selectors see each release's labels, and name, namespace and chart).", text),
			})
		}
	}
	sortAddrs(out)
	return out, diags
}

// Selection resolves --target addresses and -l selectors together: the
// instances either names. Nil when both are empty (the whole stack).
func (s *Stack) Selection(targets, selectors []string) ([]ReleaseInstanceAddr, hcl.Diagnostics) {
	t, diags := s.ResolveTargets(targets)
	l, d := s.Select(selectors)
	diags = append(diags, d...)
	seen := map[ReleaseInstanceAddr]bool{}
	var out []ReleaseInstanceAddr
	for _, a := range append(t, l...) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	sortAddrs(out)
	return out, diags
}
