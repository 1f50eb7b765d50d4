package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/convoy-sh/convoy/internal/run"
	"github.com/spf13/cobra"
)

type outputOptions struct {
	stackRun
	JSON bool
}

func newOutputCmd(s streams) *cobra.Command {
	var o outputOptions
	cmd := &cobra.Command{
		Use:   "output [RELEASE...]",
		Short: "Show the outputs of releases: revision, status and resources keys",
		Long: `Output shows what other releases may reference of a release
(release.NAME.revision, .status and .resources["KEY"]), from its deployed
revision: every release of the stack, or those named (an address such as
release.api["eu"], or a Helm release name). Resources keys are
"apiVersion/Kind/name" (docs/stack-expressions.md). A release with no deployed
revision has no outputs yet.`,
		ValidArgsFunction: completeReleases(&o.Stack, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), s, args)
		},
	}
	addStackRunFlags(cmd.Flags(), &o.stackRun)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the outputs as a JSON object keyed by release address")
	addParallelismFlag(cmd.Flags(), &o.Parallelism, "how many releases are read at once")
	return cmd
}

// outputJSON is one release's outputs in --json; null when not deployed.
type outputJSON struct {
	Name      string   `json:"name"`
	Namespace string   `json:"namespace"`
	Revision  int      `json:"revision"`
	Status    string   `json:"status"`
	Resources []string `json:"resources"`
}

func (o outputOptions) Run(ctx context.Context, s streams, names []string) error {
	opts, err := o.options(s)
	if err != nil {
		return err
	}
	session, err := run.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer session.Close()
	outs, err := session.Output(ctx, names)
	if err != nil {
		return err
	}
	if o.JSON {
		doc := map[string]*outputJSON{}
		for _, r := range outs {
			var v *outputJSON
			if r.Deployed {
				v = &outputJSON{Name: r.Instance.Name, Namespace: r.Instance.Namespace, Revision: r.Revision, Status: r.Status, Resources: r.Resources}
			}
			doc[r.Instance.Addr.String()] = v
		}
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	for i, r := range outs {
		if i > 0 {
			fmt.Fprintln(s.Out)
		}
		inst := r.Instance
		fmt.Fprintf(s.Out, "%s (%s/%s)\n", inst.Addr, inst.Namespace, inst.Name)
		if !r.Deployed {
			fmt.Fprintln(s.Out, "  (not deployed: known after apply)")
			continue
		}
		fmt.Fprintf(s.Out, "  revision  = %d\n  status    = %s\n", r.Revision, strconv.Quote(r.Status))
		if len(r.Resources) == 0 {
			fmt.Fprintln(s.Out, "  resources = {}")
			continue
		}
		fmt.Fprintln(s.Out, "  resources = {")
		for _, k := range r.Resources {
			fmt.Fprintf(s.Out, "    %s\n", strconv.Quote(k))
		}
		fmt.Fprintln(s.Out, "  }")
	}
	return nil
}
