package main

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/dag"
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
	src, err := o.Stack.source()
	if err != nil {
		return err
	}
	session, err := run.Open(ctx, run.Options{Source: src})
	if err != nil {
		return err
	}
	defer session.Close()
	ls, err := session.Loaded(true)
	if err != nil {
		return err
	}
	if len(ls.Warnings) > 0 {
		if err := writeDiagnostics(s.Err, ls.Warnings, ls.Config.Files); err != nil {
			return err
		}
	}
	g, diags := ls.Stack.Graph()
	if diags.HasErrors() {
		return diags
	}
	switch o.Format {
	case graphDot:
		return dag.WriteDot(s.Out, g)
	case graphMermaid:
		return dag.WriteMermaid(s.Out, g)
	default:
		return dag.WriteLevels(s.Out, g)
	}
}
