package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/spf13/cobra"
)

type getPipelinesOptions struct {
	kubeFlags
	Namespace     string
	AllNamespaces bool
}

func newGetPipelinesCmd(s streams) *cobra.Command {
	var o getPipelinesOptions
	cmd := &cobra.Command{
		Use:     "pipelines",
		Aliases: []string{"pipeline"},
		Short:   "List Pipeline objects: the latest tag, and each stage's digest and phase",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context(), s) },
	}
	o.add(cmd)
	cmd.Flags().StringVarP(&o.Namespace, "namespace", "n", "", "namespace (default: the kubeconfig context's)")
	cmd.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "every namespace")
	return cmd
}

func (o getPipelinesOptions) Run(ctx context.Context, s streams) error {
	c, ns, err := o.connect(o.Namespace)
	if err != nil {
		return err
	}
	if o.AllNamespaces {
		ns = ""
	}
	items, err := ctl.ListPipelines(ctx, c, ns)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		fmt.Fprintln(s.Err, "No Pipelines.")
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	head := "NAME\tLATEST\tSTAGES"
	if o.AllNamespaces {
		head = "NAMESPACE\t" + head
	}
	fmt.Fprintln(tw, head)
	for _, p := range items {
		latest := "-"
		if l := p.Status.Latest; l != nil && l.Digest != "" {
			latest = l.Tag + " (" + shortDigest(l.Digest) + ")"
		}
		var stages []string
		for _, st := range p.Status.Stages {
			stages = append(stages, fmt.Sprintf("%s: %s %s", st.Name, orDash(shortPipelineDigest(st.Digest)), st.Phase))
		}
		if len(stages) == 0 {
			stages = []string{"-"}
		}
		row := fmt.Sprintf("%s\t%s\t%s", p.Name, latest, strings.Join(stages, "\t"))
		if o.AllNamespaces {
			row = p.Namespace + "\t" + row
		}
		fmt.Fprintln(tw, row)
	}
	return tw.Flush()
}

// shortPipelineDigest is a digest's first 12 hex digits.
func shortPipelineDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	if len(d) > 12 {
		return d[:12]
	}
	return d
}
