package dag

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dominikbraun/graph"
	"github.com/hashicorp/hcl/v2"
)

// node is a test vertex ordered by name.
type node string

func (n node) String() string   { return "release." + string(n) }
func (n node) Less(o node) bool { return n < o }

// rng fakes the source range of the reference from one node to another.
func rng(line int) hcl.Range {
	return hcl.Range{Filename: "main.hcl", Start: hcl.Pos{Line: line, Column: 3}, End: hcl.Pos{Line: line, Column: 12}}
}

// build makes a graph from "a->b" edges (a depends on b); the range's line
// is the edge's position in the list, plus one.
func build(vertices string, edges ...string) *Graph[node] {
	g := New[node]()
	for _, v := range strings.Fields(vertices) {
		g.Add(node(v))
	}
	for i, e := range edges {
		from, to, _ := strings.Cut(e, "->")
		g.Connect(node(from), node(to), rng(i+1))
	}
	return g
}

func names(vs []node) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, " ")
}

func TestTopologicalOrder(t *testing.T) {
	tests := []struct {
		name     string
		vertices string
		edges    []string
		want     string
	}{
		{"independent vertices sort by name", "c b a", nil, "a b c"},
		{"dependencies first", "web api db", []string{"web->api", "api->db"}, "db api web"},
		{"diamond", "app cache db net", []string{"app->cache", "app->db", "cache->net", "db->net"}, "net cache db app"},
		{"ties broken by name regardless of insertion order", "z y x w", []string{"z->w", "y->w", "x->w"}, "w x y z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 20 { // map iteration must not leak into the order
				order, diags := build(tt.vertices, tt.edges...).TopologicalOrder()
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				if got := names(order); got != tt.want {
					t.Fatalf("order %q, want %q", got, tt.want)
				}
			}
		})
	}
}

func TestReverseOrder(t *testing.T) {
	order, diags := build("web api db", "web->api", "api->db").ReverseOrder()
	if diags.HasErrors() || names(order) != "web api db" {
		t.Fatalf("reverse order %q %v", names(order), diags)
	}
}

func TestLevels(t *testing.T) {
	g := build("db cache api worker web docs",
		"api->db", "api->cache", "worker->db", "web->api")
	levels, diags := g.Levels()
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got []string
	for _, l := range levels {
		got = append(got, names(l))
	}
	want := []string{"cache db docs", "api worker", "web"}
	if !slices.Equal(got, want) {
		t.Errorf("levels %q, want %q", got, want)
	}
}

func TestCycleDiagnostic(t *testing.T) {
	// a -> b -> c -> a, plus an unrelated edge and a second cycle x <-> y.
	g := build("a b c d x y", "a->b", "b->c", "c->a", "d->a", "x->y", "y->x")
	diags := g.Validate()
	if len(diags) != 2 {
		t.Fatalf("want 2 cycle diagnostics, got %d: %v", len(diags), diags)
	}
	d := diags[0]
	if d.Summary != "Dependency cycle" || !strings.HasPrefix(d.Detail, "release.a → release.b → release.c → release.a:") {
		t.Errorf("first cycle: %s: %s", d.Summary, d.Detail)
	}
	// The reference that closes the cycle is c->a, the third edge.
	if d.Subject == nil || d.Subject.Start.Line != 3 {
		t.Errorf("subject %v, want line 3 (c -> a)", d.Subject)
	}
	if !strings.HasPrefix(diags[1].Detail, "release.x → release.y → release.x:") || diags[1].Subject.Start.Line != 6 {
		t.Errorf("second cycle: %s at %v", diags[1].Detail, diags[1].Subject)
	}
	if _, diags := g.TopologicalOrder(); !diags.HasErrors() {
		t.Error("TopologicalOrder of a cyclic graph succeeded")
	}
	if _, diags := g.Levels(); !diags.HasErrors() {
		t.Error("Levels of a cyclic graph succeeded")
	}
}

func TestSelfLoop(t *testing.T) {
	diags := build("a", "a->a").Validate()
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, "release.a depends on itself") || diags[0].Subject.Start.Line != 1 {
		t.Fatalf("self loop: %v", diags)
	}
}

func TestSubgraph(t *testing.T) {
	g := build("web api db cache docs", "web->api", "api->db", "api->cache")
	tests := []struct {
		name     string
		targets  []node
		withDeps bool
		want     string
	}{
		{"target alone", []node{"api"}, false, "api"},
		{"target with dependencies", []node{"web"}, true, "cache db api web"},
		{"several targets", []node{"web", "docs"}, false, "docs web"},
		{"unknown target ignored", []node{"nope", "db"}, true, "db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			order, diags := g.Subgraph(tt.targets, tt.withDeps).TopologicalOrder()
			if diags.HasErrors() || names(order) != tt.want {
				t.Errorf("got %q %v, want %q", names(order), diags, tt.want)
			}
		})
	}
	sub := g.Subgraph([]node{"web"}, true)
	if r, ok := sub.EdgeRange("web", "api"); !ok || r.Start.Line != 1 {
		t.Errorf("edge ranges lost in the sub-graph: %v %v", r, ok)
	}
	order, _ := g.WithDependents([]node{"db"}).ReverseOrder()
	if names(order) != "web api db" {
		t.Errorf("WithDependents(db) destroy order %q", names(order))
	}
}

func TestDependenciesAndDependents(t *testing.T) {
	g := build("web api db cache", "web->api", "api->db", "api->cache")
	if got := fmt.Sprint(g.DependenciesOf("api")); got != "[release.cache release.db]" {
		t.Errorf("DependenciesOf(api) = %s", got)
	}
	if got := fmt.Sprint(g.DependentsOf("api")); got != "[release.web]" {
		t.Errorf("DependentsOf(api) = %s", got)
	}
	if g.Len() != 4 || !g.Has("db") || g.Has("nope") {
		t.Errorf("Len %d", g.Len())
	}
}

// TestTopologicalOrderIsTheStableSortsOrder: the order releases are
// planned, applied and shown in is the one the graph library's stable
// sort gave before TopologicalOrder sorted by itself, on random graphs.
func TestTopologicalOrderIsTheStableSortsOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 300 {
		n := 1 + r.IntN(40)
		g := New[node]()
		for v := range n {
			g.Add(node(fmt.Sprintf("v%02d", v)))
		}
		// Edges from higher to lower indexes of a shuffled order: acyclic.
		perm := r.Perm(n)
		for range r.IntN(3 * n) {
			a, b := r.IntN(n), r.IntN(n)
			if a == b {
				continue
			}
			if a < b {
				a, b = b, a
			}
			g.Connect(node(fmt.Sprintf("v%02d", perm[a])), node(fmt.Sprintf("v%02d", perm[b])), rng(1))
		}
		got, diags := g.TopologicalOrder()
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		want, err := graph.StableTopologicalSort(g.g, func(a, b node) bool { return a.Less(b) })
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("graph %d: order %s, the stable sort's %s", i, names(got), names(want))
		}
	}
}

// BenchmarkValidate checks a stack-shaped graph for cycles: 2,000
// vertices, a tenth depending on one of the others.
func BenchmarkValidate(b *testing.B) {
	g := New[node]()
	for i := range 2000 {
		v := node(fmt.Sprintf("r%04d", i))
		g.Add(v)
		if i%10 == 9 {
			g.Connect(v, node(fmt.Sprintf("r%04d", i-9)), rng(i))
		}
	}
	b.ResetTimer()
	for range b.N {
		if diags := g.Validate(); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}

// TestAcyclicAgreesWithComponents: on random graphs, acyclic is true
// exactly when no strongly connected component has two vertices or more.
func TestAcyclicAgreesWithComponents(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 26))
	for range 500 {
		g := New[node]()
		n := 1 + r.IntN(12)
		for i := range n {
			g.Add(node(fmt.Sprintf("v%02d", i)))
		}
		for range r.IntN(2 * n) {
			g.Connect(node(fmt.Sprintf("v%02d", r.IntN(n))), node(fmt.Sprintf("v%02d", r.IntN(n))), rng(1))
		}
		sccs, err := graph.StronglyConnectedComponents(g.g)
		if err != nil {
			t.Fatal(err)
		}
		want := !slices.ContainsFunc(sccs, func(c []node) bool { return len(c) > 1 })
		if got := g.acyclic(); got != want {
			t.Fatalf("acyclic = %v, components %v", got, sccs)
		}
	}
}
