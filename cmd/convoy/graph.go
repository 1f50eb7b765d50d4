package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/dag"
	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"
)

// graphFormat is an output format of `convoy graph`.
type graphFormat string

const (
	graphText    graphFormat = "text"
	graphDot     graphFormat = "dot"
	graphMermaid graphFormat = "mermaid"
)

func (f *graphFormat) String() string { return string(*f) }
func (f *graphFormat) Type() string   { return "format" }
func (f *graphFormat) Set(s string) error {
	switch graphFormat(s) {
	case graphText, graphDot, graphMermaid:
		*f = graphFormat(s)
		return nil
	}
	return fmt.Errorf("unknown format %q: use text, dot or mermaid", s)
}

type graphOptions struct {
	Stack  stackFlags
	Format graphFormat
}

func newGraphCmd(s streams) *cobra.Command {
	o := graphOptions{Format: graphText}
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Print the release dependency graph",
		Long: `Graph prints the stack's release instances and their dependencies.

  text     the levels in apply order: each level's releases can run in parallel
  dot      Graphviz (convoy graph --format dot | dot -Tsvg > graph.svg)
  mermaid  a Mermaid flowchart, for Markdown

Edges point from a release to what it depends on.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), s)
		},
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	cmd.Flags().VarP(&o.Format, "format", "f", "output format: text, dot or mermaid")
	return cmd
}

func (o graphOptions) Run(ctx context.Context, s streams) error {
	ls, diags := o.Stack.loadStack(ctx)
	var g *dag.Graph[config.ReleaseInstanceAddr]
	if ls.Stack != nil {
		var d hcl.Diagnostics
		g, d = ls.Stack.Graph()
		diags = append(diags, d...)
	}
	if len(diags) > 0 {
		var files map[string]*hcl.File
		if ls.Config != nil {
			files = ls.Config.Files
		}
		if err := writeDiagnostics(s.Err, diags, files); err != nil {
			return err
		}
	}
	if diags.HasErrors() {
		return errSilent
	}
	switch o.Format {
	case graphDot:
		return writeDot(s.Out, g)
	case graphMermaid:
		return writeMermaid(s.Out, g)
	default:
		return writeLevels(s.Out, g)
	}
}

func writeLevels(w io.Writer, g *dag.Graph[config.ReleaseInstanceAddr]) error {
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

func writeDot(w io.Writer, g *dag.Graph[config.ReleaseInstanceAddr]) error {
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

func writeMermaid(w io.Writer, g *dag.Graph[config.ReleaseInstanceAddr]) error {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	ids := map[config.ReleaseInstanceAddr]string{}
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
