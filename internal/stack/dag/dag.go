package dag

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dominikbraun/graph"
	"github.com/hashicorp/hcl/v2"
)

// Vertex is what a graph holds: a comparable address with a stable order.
type Vertex[K any] interface {
	comparable
	String() string
	Less(K) bool
}

type edgeKey[K comparable] struct{ dependent, dependency K }

// Graph is a directed dependency graph. The zero value is not usable; call New.
type Graph[K Vertex[K]] struct {
	// g stores edges from dependency to dependent, so that a topological
	// sort yields dependencies first.
	g      graph.Graph[K, K]
	ranges map[edgeKey[K]]hcl.Range
	// selfLoops are vertices that depend on themselves; the graph library
	// stores them but its algorithms do not treat them as cycles.
	selfLoops map[K]hcl.Range
}

// New returns an empty graph.
func New[K Vertex[K]]() *Graph[K] {
	return &Graph[K]{
		g:         graph.New(func(k K) K { return k }, graph.Directed()),
		ranges:    map[edgeKey[K]]hcl.Range{},
		selfLoops: map[K]hcl.Range{},
	}
}

// Add adds a vertex; adding an existing vertex does nothing.
func (g *Graph[K]) Add(v K) {
	if err := g.g.AddVertex(v); err != nil && !errors.Is(err, graph.ErrVertexAlreadyExists) {
		panic(fmt.Sprintf("dag: add vertex %s: %v", v, err)) // only fails on duplicates
	}
}

// Connect records that dependent depends on dependency, adding both vertices
// if needed. rng is the source of the dependency (a reference or a
// depends_on entry); the first range recorded for an edge is kept.
func (g *Graph[K]) Connect(dependent, dependency K, rng hcl.Range) {
	g.Add(dependent)
	g.Add(dependency)
	if dependent == dependency {
		if _, ok := g.selfLoops[dependent]; !ok {
			g.selfLoops[dependent] = rng
		}
		return
	}
	k := edgeKey[K]{dependent, dependency}
	if _, ok := g.ranges[k]; ok {
		return
	}
	g.ranges[k] = rng
	if err := g.g.AddEdge(dependency, dependent); err != nil && !errors.Is(err, graph.ErrEdgeAlreadyExists) {
		panic(fmt.Sprintf("dag: add edge %s -> %s: %v", dependent, dependency, err))
	}
}

// Len is the number of vertices.
func (g *Graph[K]) Len() int {
	n, _ := g.g.Order()
	return n
}

// Has says whether v is a vertex of the graph.
func (g *Graph[K]) Has(v K) bool {
	_, err := g.g.Vertex(v)
	return err == nil
}

// Vertices returns all vertices in order.
func (g *Graph[K]) Vertices() []K {
	adj, _ := g.g.AdjacencyMap()
	out := make([]K, 0, len(adj))
	for v := range adj {
		out = append(out, v)
	}
	sortVertices(out)
	return out
}

// DependenciesOf returns what v depends on directly, in order.
func (g *Graph[K]) DependenciesOf(v K) []K {
	pred, _ := g.g.PredecessorMap()
	return sortedKeys(pred[v])
}

// DependentsOf returns what depends on v directly, in order.
func (g *Graph[K]) DependentsOf(v K) []K {
	adj, _ := g.g.AdjacencyMap()
	return sortedKeys(adj[v])
}

// EdgeRange returns the source range recorded for dependent → dependency.
func (g *Graph[K]) EdgeRange(dependent, dependency K) (hcl.Range, bool) {
	r, ok := g.ranges[edgeKey[K]{dependent, dependency}]
	return r, ok
}

// Validate reports every dependency cycle as a diagnostic naming the whole
// path (a → b → a, read "a depends on b, which depends on a") with the range
// of the reference that closes it.
func (g *Graph[K]) Validate() hcl.Diagnostics {
	var diags hcl.Diagnostics
	selfs := make([]K, 0, len(g.selfLoops))
	for v := range g.selfLoops {
		selfs = append(selfs, v)
	}
	sortVertices(selfs)
	for _, v := range selfs {
		rng := g.selfLoops[v]
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Dependency cycle",
			Detail:   fmt.Sprintf("%s depends on itself.", v),
			Subject:  &rng,
		})
	}
	if g.acyclic() {
		return diags
	}
	sccs, err := graph.StronglyConnectedComponents(g.g)
	if err != nil {
		panic(fmt.Sprintf("dag: strongly connected components: %v", err))
	}
	var cycles [][]K
	for _, scc := range sccs {
		if len(scc) > 1 {
			sortVertices(scc)
			cycles = append(cycles, g.cyclePath(scc))
		}
	}
	slices.SortFunc(cycles, func(a, b []K) int { return compare(a[0], b[0]) })
	for _, path := range cycles {
		names := make([]string, len(path))
		for i, v := range path {
			names[i] = v.String()
		}
		last, first := path[len(path)-2], path[0]
		rng := g.ranges[edgeKey[K]{last, first}]
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Dependency cycle",
			Detail: fmt.Sprintf("%s: each depends on the next, so none of them can be applied first. Remove one of the references or depends_on entries.",
				strings.Join(names, " → ")),
			Subject: &rng,
		})
	}
	return diags
}

// acyclic says whether no cycle joins two or more vertices (self loops
// aside), by Kahn's count over the edges alone: every dependent is freed.
// Far cheaper than the strongly connected components Validate names
// cycles with, which it computes only when this fails.
func (g *Graph[K]) acyclic() bool {
	waiting := make(map[K]int)
	next := make(map[K][]K)
	for k := range g.ranges {
		waiting[k.dependent]++
		next[k.dependency] = append(next[k.dependency], k.dependent)
	}
	var free []K
	for v := range next {
		if waiting[v] == 0 {
			free = append(free, v)
		}
	}
	freed := 0
	for i := 0; i < len(free); i++ {
		for _, v := range next[free[i]] {
			if waiting[v]--; waiting[v] == 0 {
				free = append(free, v)
				freed++
			}
		}
	}
	return freed == len(waiting)
}

// cyclePath finds a cycle through the smallest vertex of a strongly
// connected component, following dependencies in order. The returned path
// starts and ends with that vertex.
func (g *Graph[K]) cyclePath(scc []K) []K {
	in := map[K]bool{}
	for _, v := range scc {
		in[v] = true
	}
	pred, _ := g.g.PredecessorMap()
	start := scc[0]
	visited := map[K]bool{}
	var path []K
	var dfs func(v K) bool
	dfs = func(v K) bool {
		path = append(path, v)
		visited[v] = true
		for _, dep := range sortedKeys(pred[v]) {
			if !in[dep] {
				continue
			}
			if dep == start {
				path = append(path, start)
				return true
			}
			if !visited[dep] && dfs(dep) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	dfs(start)
	return path
}

// TopologicalOrder returns every vertex after all of its dependencies, ties
// broken by vertex order. It fails with the cycle diagnostics when the graph
// has a cycle.
func (g *Graph[K]) TopologicalOrder() ([]K, hcl.Diagnostics) {
	if diags := g.Validate(); diags.HasErrors() {
		return nil, diags
	}
	// Kahn's algorithm in the order of the graph library's stable sort
	// (the roots in vertex order, then, as each vertex is taken, those it
	// frees, in vertex order, queued after the rest), which visits every
	// vertex for each vertex taken: 40 ms at 1,000 releases.
	adj, err := g.g.AdjacencyMap()
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Dependency graph", Detail: err.Error()}}
	}
	waiting := make(map[K]int, len(adj))
	for _, succ := range adj {
		for v := range succ {
			waiting[v]++
		}
	}
	queue := make([]K, 0, len(adj))
	for v := range adj {
		if waiting[v] == 0 {
			queue = append(queue, v)
		}
	}
	sortVertices(queue)
	for i := 0; i < len(queue); i++ {
		start := len(queue)
		for v := range adj[queue[i]] {
			if waiting[v]--; waiting[v] == 0 {
				queue = append(queue, v)
			}
		}
		sortVertices(queue[start:])
	}
	if len(queue) != len(adj) {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Dependency cycle", Detail: "topological sort cannot be computed on graph with cycles"}}
	}
	return queue, nil
}

// ReverseOrder is the order for destroying: every vertex before its
// dependencies.
func (g *Graph[K]) ReverseOrder() ([]K, hcl.Diagnostics) {
	order, diags := g.TopologicalOrder()
	slices.Reverse(order)
	return order, diags
}

// Levels groups the vertices into waves: every vertex of a level depends only
// on vertices of earlier levels, so a level's vertices can run in parallel
// once the previous levels are done. Each level is in vertex order.
func (g *Graph[K]) Levels() ([][]K, hcl.Diagnostics) {
	order, diags := g.TopologicalOrder()
	if diags.HasErrors() {
		return nil, diags
	}
	pred, _ := g.g.PredecessorMap()
	level := map[K]int{}
	var levels [][]K
	for _, v := range order {
		l := 0
		for dep := range pred[v] {
			l = max(l, level[dep]+1)
		}
		level[v] = l
		for len(levels) <= l {
			levels = append(levels, nil)
		}
		levels[l] = append(levels[l], v)
	}
	for _, l := range levels {
		sortVertices(l)
	}
	return levels, nil
}

// Subgraph returns the graph restricted to targets, plus everything they
// depend on (transitively) when withDependencies is set. Targets that are not
// vertices are ignored.
func (g *Graph[K]) Subgraph(targets []K, withDependencies bool) *Graph[K] {
	keep := map[K]bool{}
	pred, _ := g.g.PredecessorMap()
	var walk func(v K)
	walk = func(v K) {
		if keep[v] {
			return
		}
		keep[v] = true
		if withDependencies {
			for dep := range pred[v] {
				walk(dep)
			}
		}
	}
	for _, t := range targets {
		if g.Has(t) {
			walk(t)
		}
	}
	return g.restrict(keep)
}

// WithDependents returns the graph restricted to targets and everything that
// depends on them (transitively): what a targeted destroy must remove first.
func (g *Graph[K]) WithDependents(targets []K) *Graph[K] {
	keep := map[K]bool{}
	adj, _ := g.g.AdjacencyMap()
	var walk func(v K)
	walk = func(v K) {
		if keep[v] {
			return
		}
		keep[v] = true
		for d := range adj[v] {
			walk(d)
		}
	}
	for _, t := range targets {
		if g.Has(t) {
			walk(t)
		}
	}
	return g.restrict(keep)
}

func (g *Graph[K]) restrict(keep map[K]bool) *Graph[K] {
	out := New[K]()
	for _, v := range g.Vertices() {
		if keep[v] {
			out.Add(v)
		}
	}
	for k, rng := range g.ranges {
		if keep[k.dependent] && keep[k.dependency] {
			out.Connect(k.dependent, k.dependency, rng)
		}
	}
	for v, rng := range g.selfLoops {
		if keep[v] {
			out.Connect(v, v, rng)
		}
	}
	return out
}

func compare[K Vertex[K]](a, b K) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}

func sortVertices[K Vertex[K]](vs []K) { slices.SortFunc(vs, compare[K]) }

func sortedKeys[K Vertex[K], V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortVertices(out)
	return out
}
