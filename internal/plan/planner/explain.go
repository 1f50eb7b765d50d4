package planner

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/chart/postrender"
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// maxExplainedLeaves bounds the values leaves convoy explain perturbs for
// one release: each costs a render (18–22 ms for hack/bench's web chart on
// the loaded two-core machine, docs/performance.md), so at most about
// 2.5 s; podinfo 6.14 has 71 candidates.
const maxExplainedLeaves = 128

// explains reports whether inst is the release Input.Explain names.
func (c *computer) explains(inst *config.ReleaseInstance) bool {
	return c.in.Explain != nil && *c.in.Explain == inst.Addr
}

// explainFields traces every rendered field of the release to the values
// leaves it depends on, changed or not (plan.ReleaseChange.Explained):
// the release is rendered again once per leaf of its merged values with
// that leaf alone perturbed (a string shifted, a number plus one, a bool
// negated, set in the user values), and each field whose rendered value
// changes depends on it. Only leaves whose value's text occurs in some
// rendered field can matter directly and are tried; over
// maxExplainedLeaves of them, none is (Attribution says so). A field
// computed from a value without printing it (a replica count doubled)
// is missed by that filter.
func (c *computer) explainFields(ctx context.Context, rd *release.Renderer, rc *plan.ReleaseChange, req *release.Request, prep *release.Prepared, red *sensitive.Redactor) error {
	current := objectDocs(prep.Rendered, nil)
	texts := map[string]bool{}
	for _, d := range current {
		for _, l := range plan.Leaves("", d) {
			texts[fmt.Sprint(l.Value)] = true
		}
	}
	type candidate struct {
		leaf   plan.Leaf
		values map[string]any
	}
	var cands []candidate
	for _, l := range plan.Leaves("", prep.Rendered.Values) {
		if !containsText(texts, fmt.Sprint(l.Value)) {
			continue
		}
		segs, ok := parsePath(l.Path)
		other, changes := perturb(l.Value)
		if !ok || !changes {
			continue
		}
		values := copyJSON(orEmpty(req.Values)).(map[string]any)
		setPath(values, segs, other)
		cands = append(cands, candidate{l, values})
	}
	rc.Explained = map[string]map[string][]plan.Origin{}
	if len(cands) > maxExplainedLeaves {
		note := fmt.Sprintf("too many values leaves to trace unchanged fields to (%d; at most %d are)", len(cands), maxExplainedLeaves)
		rc.Attribution = strings.Join(slices.DeleteFunc([]string{rc.Attribution, note}, func(s string) bool { return s == "" }), "; ")
		return nil
	}
	opts := rd.RenderOptions(ctx, req, prep.Revision, chart.ActionUpgrade)
	if prep.IsInstall {
		opts.Action = chart.ActionInstall
	}
	opts.Lookup = sharedLookup(opts.Lookup)
	render := func(values map[string]any) (map[string]any, error) {
		o := opts
		o.UserValues = values
		var r *chart.Rendered
		err := c.do(ctx, func() error {
			c.stats.add(&c.stats.Attributions, 1)
			var err error
			if r, err = chart.Render(req.Chart, o); err != nil {
				return err
			}
			return postrender.Apply(ctx, r, req.Namespace, req.PostRender)
		})
		if err != nil {
			return nil, err
		}
		return objectDocs(r, nil), nil
	}
	var unstable map[string][]string
	if prep.Rendered.Impure {
		again, err := render(req.Values)
		if err != nil {
			return red.Err(err)
		}
		unstable = differingPaths(current, again)
		current = again
	}
	for _, cd := range cands {
		docs, err := render(cd.values)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue // the chart refuses the perturbed value: no field is traced to it
		}
		origin, ok := valueOrigin(rc.ValueOrigins, cd.leaf.Path)
		if !ok {
			origin = plan.Origin{Input: "values " + cd.leaf.Path, Kind: plan.OriginChartDefault}
			if segs, _ := parsePath(cd.leaf.Path); segs != nil {
				if _, set := lookupPath(req.Values, segs); set {
					origin.Kind = plan.OriginValues
				}
			}
		}
		for key, paths := range differingPaths(current, docs) {
			for _, p := range paths {
				if overlaps(unstable[key], p) {
					continue
				}
				if rc.Explained[key] == nil {
					rc.Explained[key] = map[string][]plan.Origin{}
				}
				rc.Explained[key][p] = append(rc.Explained[key][p], origin)
			}
		}
	}
	return nil
}

// containsText reports whether s is, or occurs in, one of the texts.
func containsText(texts map[string]bool, s string) bool {
	if s == "" || s == "<nil>" {
		return false
	}
	if texts[s] {
		return true
	}
	for t := range texts {
		if len(t) > len(s) && strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// perturb is another value of v's type: a string shifted (or extended),
// a number plus one, a bool negated.
func perturb(v any) (any, bool) {
	switch t := v.(type) {
	case string:
		if s := shift(t); s != t {
			return s, true
		}
		return t + "x", true
	case bool:
		return !t, true
	case int:
		return t + 1, true
	case int64:
		return t + 1, true
	case float64:
		return t + 1, true
	case interface{ String() string }:
		if f, err := strconv.ParseFloat(t.String(), 64); err == nil {
			return f + 1, true
		}
	}
	return v, false
}
