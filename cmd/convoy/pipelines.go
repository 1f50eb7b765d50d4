package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/convoy-sh/convoy/api/v1alpha1"
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
	header := namespaceColumn(o.AllNamespaces, "NAMESPACE", "NAME\tLATEST\tSTAGES")
	return getList(ctx, s, &o.kubeFlags, o.Namespace, o.AllNamespaces, "Pipelines", ctl.ListPipelines, header, func(p *v1alpha1.Pipeline) string {
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
		return namespaceColumn(o.AllNamespaces, p.Namespace, fmt.Sprintf("%s\t%s\t%s", p.Name, latest, strings.Join(stages, "\t")))
	})
}

// shortPipelineDigest is a digest's first 12 hex digits.
func shortPipelineDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	if len(d) > 12 {
		return d[:12]
	}
	return d
}
