package dag

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteLevels writes the levels in apply order: each level's vertices can
// run in parallel, each with what it runs after.
func WriteLevels[K Vertex[K]](w io.Writer, g *Graph[K]) error {
	levels, diags := g.Levels()
	if diags.HasErrors() {
		return diags
	}
	var b strings.Builder
	for i, level := range levels {
		fmt.Fprintf(&b, "Level %d:\n", i+1)
		for _, v := range level {
			deps := g.DependenciesOf(v)
			if len(deps) == 0 {
				fmt.Fprintf(&b, "  %s\n", v)
				continue
			}
			names := make([]string, len(deps))
			for j, d := range deps {
				names[j] = d.String()
			}
			fmt.Fprintf(&b, "  %s (after %s)\n", v, strings.Join(names, ", "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteDot writes the graph for Graphviz; edges point from a vertex to
// what it depends on.
func WriteDot[K Vertex[K]](w io.Writer, g *Graph[K]) error {
	var b strings.Builder
	b.WriteString("digraph convoy {\n  rankdir = \"LR\";\n  node [shape = box];\n")
	for _, v := range g.Vertices() {
		fmt.Fprintf(&b, "  %s;\n", strconv.Quote(v.String()))
	}
	for _, v := range g.Vertices() {
		for _, d := range g.DependenciesOf(v) {
			fmt.Fprintf(&b, "  %s -> %s;\n", strconv.Quote(v.String()), strconv.Quote(d.String()))
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMermaid writes the graph as a Mermaid flowchart.
func WriteMermaid[K Vertex[K]](w io.Writer, g *Graph[K]) error {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	ids := map[K]string{}
	for i, v := range g.Vertices() {
		ids[v] = fmt.Sprintf("r%d", i)
		// Mermaid labels are quoted; '#quot;' is its escape for '"'.
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", ids[v], strings.ReplaceAll(v.String(), `"`, "#quot;"))
	}
	for _, v := range g.Vertices() {
		for _, d := range g.DependenciesOf(v) {
			fmt.Fprintf(&b, "  %s --> %s\n", ids[v], ids[d])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
