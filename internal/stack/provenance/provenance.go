package provenance

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/memo"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Cache keeps what is read once per chart (the leaves of its values.yaml
// and their lines) for the releases of one plan. It is safe for
// concurrent use; the zero Cache is ready.
type Cache struct {
	charts memo.Map[chartKey, map[string]at]
}

type chartKey struct {
	ch   *chart.Chart
	file string
}

// Values is Cache.Values without a cache.
func Values(st *config.Stack, inst *config.ReleaseInstance, ch *chart.Chart) (map[string]plan.Origin, error) {
	var c Cache
	return c.Values(st, inst, ch)
}

// Values maps each leaf of the values a release instance of st renders
// with (the chart's defaults coalesced with its values, as plan.Leaves
// writes their paths) and each leaf its values, set and set_sensitive
// give (a null that deletes a default included) to where it was set,
// with what it overrode. Leaves Helm adds itself (an empty global table
// in each subchart's values, an empty table for a subchart given no
// values) have none.
//
// The origins share their Via and Source: they must not be modified.
// inst must be known (config.ReleaseInstance.Known).
func (c *Cache) Values(st *config.Stack, inst *config.ReleaseInstance, ch *chart.Chart) (map[string]plan.Origin, error) {
	user, _, err := resolve.Values(inst)
	if err != nil {
		return nil, err
	}
	tree, merged, err := chart.CoalesceValuesTree(ch, user)
	if err != nil {
		return nil, resolve.WithAddr(inst.Addr, err)
	}
	b := newBuilder(st, inst)
	if err := b.userLayers(); err != nil {
		return nil, resolve.WithAddr(inst.Addr, err)
	}
	root := c.chartNode(tree, nil, b.chartName(ch))

	out := map[string]plan.Origin{}
	add := func(p string) {
		if _, done := out[p]; done || p == "" {
			return
		}
		if hits := b.hits(root, p); len(hits) > 0 {
			out[p] = b.origin(p, hits)
		}
	}
	for _, l := range plan.Leaves("", merged) {
		add(l.Path)
	}
	for _, l := range plan.Leaves("", user) {
		add(l.Path)
	}
	return out, nil
}

// builder builds the origins of one release instance.
type builder struct {
	st   *config.Stack
	inst *config.ReleaseInstance
	src  *config.Config  // nil for a stack not made by Evaluate
	blk  *config.Release // the instance's block, nil without src
	dir  string          // the stack directory, absolute
	// users are the values layers, set and set_sensitive, the last word
	// first.
	users []userLayer

	shown  map[string]string // file name → as shown
	vias   map[hcl.Expression][]plan.Origin
	vars   map[string]plan.Origin
	locals map[string]*plan.Origin // nil while being built
}

type userLayer struct {
	kind   plan.OriginKind
	leaves map[string]at
}

func newBuilder(st *config.Stack, inst *config.ReleaseInstance) *builder {
	b := &builder{
		st: st, inst: inst, src: st.Source(),
		shown:  map[string]string{},
		vias:   map[hcl.Expression][]plan.Origin{},
		vars:   map[string]plan.Origin{},
		locals: map[string]*plan.Origin{},
	}
	if b.src != nil {
		b.blk = b.src.Releases[inst.Addr.Release.Name]
	}
	b.dir, _ = filepath.Abs(st.Dir)
	return b
}

// userLayers indexes the values layers, then set and set_sensitive, and
// puts them the last word first.
func (b *builder) userLayers() error {
	var valuesExpr, setExpr, setSensitiveExpr hcl.Expression
	if b.blk != nil {
		valuesExpr, setExpr, setSensitiveExpr = b.blk.Values, b.blk.Set, b.blk.SetSensitive
	}
	var layers []userLayer
	for i, l := range b.inst.Values {
		expr := layerExpr(valuesExpr, l.Range)
		via := expr
		if via == nil {
			via = valuesExpr // the list is not written literally
		}
		fixed := b.source(l.Range)
		switch l.Kind {
		case config.ValuesYAML:
			text, _ := l.Value.Unmark()
			if !text.IsKnown() {
				return fmt.Errorf("values[%d]: %w", i, config.ErrUnknownValue)
			}
			if text.IsNull() {
				continue
			}
			switch {
			case l.File != "":
				layers = append(layers, userLayer{plan.OriginValuesFile, yamlIndex([]byte(text.AsString()), inFile(b.show(l.File)), via)})
			default:
				place := b.heredoc(expr, text.AsString())
				if place == nil {
					place = atFixed(fixed)
				}
				layers = append(layers, userLayer{plan.OriginValues, yamlIndex([]byte(text.AsString()), place, via)})
			}
		default:
			m, _, err := l.Go()
			if err != nil {
				return fmt.Errorf("values[%d]: %w", i, err)
			}
			leaves := map[string]at{}
			b.objectIndex(leaves, expr, m, "", at{src: fixed, via: via}, plainAt)
			layers = append(layers, userLayer{plan.OriginValues, leaves})
		}
	}
	layers = append(layers,
		b.setLayer(plan.OriginSet, b.inst.Set, setExpr),
		b.setLayer(plan.OriginSetSensitive, b.inst.SetSensitive, setSensitiveExpr))
	slices.Reverse(layers)
	b.users = layers
	return nil
}

// layerExpr is the element of the values list written at rng, nil when
// the list is not written literally.
func layerExpr(values hcl.Expression, rng hcl.Range) hcl.Expression {
	tup, ok := values.(*hclsyntax.TupleConsExpr)
	if !ok {
		return nil
	}
	for _, ex := range tup.Exprs {
		if ex.Range() == rng {
			return ex
		}
	}
	return nil
}

func leavesAt(out map[string]at, path string, v any, a at) {
	for _, l := range plan.Leaves(path, v) {
		if l.Path != "" {
			out[l.Path] = a
		}
	}
}

// setLayer indexes set or set_sensitive: each path at its item's key when
// the map is written literally, else at the attribute.
func (b *builder) setLayer(kind plan.OriginKind, set map[string]cty.Value, expr hcl.Expression) userLayer {
	leaves := map[string]at{}
	if len(set) == 0 {
		return userLayer{kind, leaves}
	}
	whole := at{src: b.source(b.inst.DeclRange), via: expr}
	items := map[string]hclsyntax.ObjectConsItem{}
	if expr != nil {
		whole.src = b.source(expr.Range())
		if obj, ok := expr.(*hclsyntax.ObjectConsExpr); ok {
			for _, item := range obj.Items {
				if k, diags := item.KeyExpr.Value(nil); !diags.HasErrors() && k.IsKnown() && !k.IsNull() && k.Type() == cty.String {
					items[k.AsString()] = item
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		a := whole
		if item, ok := items[k]; ok {
			a = at{src: b.source(item.KeyExpr.Range()), via: item.ValueExpr}
		}
		for _, p := range setPaths(k) {
			leaves[p] = a
		}
	}
	return userLayer{kind, leaves}
}

// setPaths are the leaves a Helm --set path sets (one, but for a path
// Helm does not parse).
func setPaths(k string) []string {
	m := map[string]any{}
	if err := chart.ParseSetString(k+"=x", m); err != nil {
		return nil
	}
	var out []string
	for _, l := range plan.Leaves("", m) {
		if l.Value != nil { // the nulls before a list index
			out = append(out, l.Path)
		}
	}
	return out
}

// chartName is how the chart's files are named: a local chart directory
// by its path from the stack directory, any other chart by its name (as
// Helm names its templates).
func (b *builder) chartName(ch *chart.Chart) string {
	if b.inst.ChartSource == config.ChartLocal && !strings.HasSuffix(b.inst.Chart, ".tgz") {
		if p, err := config.ResolvePath(b.st.Dir, b.inst.Chart); err == nil {
			return filepath.ToSlash(b.show(p))
		}
	}
	return ch.Name()
}

// show is a file name as origins show it: relative to the stack
// directory when inside it, else as given.
func (b *builder) show(name string) string {
	if s, ok := b.shown[name]; ok {
		return s
	}
	s := name
	if abs, err := filepath.Abs(name); err == nil {
		if rel, err := filepath.Rel(b.dir, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			s = rel
		}
	}
	b.shown[name] = s
	return s
}

// source is the start of rng, as origins show it.
func (b *builder) source(rng hcl.Range) *plan.Source {
	if rng.Filename == "" {
		return nil
	}
	return &plan.Source{File: b.show(rng.Filename), Line: rng.Start.Line, Column: rng.Start.Column}
}
