package dag

import (
	"fmt"
	"github.com/dominikbraun/graph"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

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

// TestTopologicalOrderIsTheLibrarys: the linear-time sort gives the order
// graph.StableTopologicalSort gave (plans and applies list and walk
// releases in it), on graphs of independent vertices, chains, fans and
// random dependencies.
func TestTopologicalOrderIsTheLibrarys(t *testing.T) {
	rnd := rand.New(rand.NewPCG(26, 2000))
	for _, tt := range []struct {
		name  string
		n     int
		edges func(i int) []int // the vertices i depends on, all < i
	}{
		{"independent", 300, func(int) []int { return nil }},
		{"chain", 100, func(i int) []int {
			if i == 0 {
				return nil
			}
			return []int{i - 1}
		}},
		{"fan in and out", 200, func(i int) []int {
			switch i {
			case 0:
				return nil
			case 199:
				return []int{1, 50, 100, 198}
			}
			return []int{0}
		}},
		{"random", 400, func(i int) []int {
			var deps []int
			for range rnd.IntN(4) {
				if i > 0 {
					deps = append(deps, rnd.IntN(i))
				}
			}
			return deps
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := New[node]()
			// Names out of dependency order, so ties and dependencies disagree.
			name := func(i int) node { return node(fmt.Sprintf("v%03d", (i*37)%tt.n)) }
			for i := range tt.n {
				g.Add(name(i))
			}
			for i := range tt.n {
				for _, d := range tt.edges(i) {
					g.Connect(name(i), name(d), rng(1))
				}
			}
			want, err := graph.StableTopologicalSort(g.g, func(a, b node) bool { return a.Less(b) })
			if err != nil {
				t.Fatal(err)
			}
			got, diags := g.TopologicalOrder()
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("order differs from the library's:\n got %s\nwant %s", names(got), names(want))
			}
		})
	}
}
