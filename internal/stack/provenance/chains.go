package provenance

import (
	"slices"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/plan"
)

// chartNode is a chart of the release's values tree with its
// values.yaml's leaves.
type chartNode struct {
	seg     string // the key of its values in its parent's, as a path
	leaves  map[string]at
	parent  *chartNode
	deps    []*chartNode
	imports []importValue
}

type importValue struct {
	dep           *chartNode
	child, parent string // paths in the dependency's values and in this chart's
}

// chartNode indexes v and its subcharts; name is how v's files are named.
func (c *Cache) chartNode(v *chart.ValuesNode, parent *chartNode, name string) *chartNode {
	file := name + "/values.yaml"
	leaves, _ := c.charts.Get(chartKey{v.Chart, file}, func() (map[string]at, error) {
		if len(v.Chart.RawValues) > 0 {
			return yamlIndex(v.Chart.RawValues, inFile(file), nil), nil
		}
		// A chart rebuilt from a release record has no file: no lines.
		out := map[string]at{}
		leavesAt(out, "", v.Chart.Values, at{src: &plan.Source{File: file}})
		return out, nil
	})
	n := &chartNode{seg: seg(v.Name), leaves: leaves, parent: parent}
	for _, d := range v.Deps {
		n.deps = append(n.deps, c.chartNode(d, n, name+"/charts/"+d.Chart.Name()))
	}
	for _, iv := range v.Imports {
		for _, d := range n.deps {
			if d.seg == seg(iv.Dep) {
				n.imports = append(n.imports, importValue{dep: d, child: dotted(iv.Child), parent: dotted(iv.Parent)})
				break
			}
		}
	}
	return n
}

// hit is a source that sets a leaf.
type hit struct {
	kind plan.OriginKind
	at   at
}

// hits are the sources that set the leaf at path p of the values, the
// winner first, in Helm's order of precedence: the user's values over the
// chart's defaults, a parent's defaults over its subcharts', a chart's
// own over what it imports; in a subchart, its parent's globals over its
// own.
func (b *builder) hits(root *chartNode, p string) []hit {
	// The deepest subchart whose values hold p in their global table:
	// from there up, each parent's globals come first.
	x, r := root, p
	var gx *chartNode
	var gr string
	for {
		var next *chartNode
		var rest string
		for _, d := range x.deps {
			if rs, ok := under(r, d.seg); ok {
				next, rest = d, rs
				break
			}
		}
		if next == nil {
			break
		}
		x, r = next, rest
		if _, ok := under(r, "global"); ok {
			gx, gr = x, r
		}
	}
	if gx != nil {
		return b.full(gx, gr, nil)
	}
	return b.full(root, p, nil)
}

// full appends what sets r in the coalesced values of x.
func (b *builder) full(x *chartNode, r string, out []hit) []hit {
	if x.parent == nil {
		for _, l := range b.users {
			if a, ok := l.leaves[r]; ok {
				out = append(out, hit{l.kind, a})
			}
		}
		return down(x, r, out)
	}
	if _, ok := under(r, "global"); ok {
		out = b.full(x.parent, r, out)
	}
	return b.full(x.parent, join(x.seg, r), out)
}

// down appends what sets r in the defaults of x: its values.yaml, its
// subcharts', what it imports.
func down(x *chartNode, r string, out []hit) []hit {
	if a, ok := x.leaves[r]; ok {
		out = append(out, hit{plan.OriginChartDefault, a})
	}
	for _, d := range x.deps {
		if rest, ok := under(r, d.seg); ok {
			out = down(d, rest, out)
		}
	}
	for _, iv := range x.imports {
		if rest, ok := under(r, iv.parent); ok {
			c := join(iv.child, rest)
			if a, ok := x.leaves[join(iv.dep.seg, c)]; ok {
				out = append(out, hit{plan.OriginChartDefault, a})
			}
			out = down(iv.dep, c, out)
		}
	}
	return out
}

// origin is the origin of the leaf at p: the first hit, with the others
// as what it overrode, the lowest first.
func (b *builder) origin(p string, hits []hit) plan.Origin {
	input := "values " + p
	o := plan.Origin{Input: input, Kind: hits[0].kind, Source: hits[0].at.src, Via: b.read(hits[0].at)}
	for _, h := range slices.Backward(hits[1:]) {
		o.Overrode = append(o.Overrode, plan.Origin{Input: input, Kind: h.kind, Source: h.at.src, Via: b.read(h.at)})
	}
	return o
}

// read is what the expression that set a leaf read.
func (b *builder) read(a at) []plan.Origin {
	if a.vias != nil {
		return a.vias
	}
	return b.via(a.via)
}
