package main

import (
	"context"
	"fmt"

	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/spf13/cobra"
)

type promoteOptions struct {
	kubeFlags
	Namespace, Pipeline, Stage, Digest string
}

func newPromoteCmd(s streams) *cobra.Command {
	var o promoteOptions
	cmd := &cobra.Command{
		Use:   "promote PIPELINE STAGE",
		Short: "Approve a Pipeline's manual stage for the digest it awaits: the controller promotes it",
		Long: `Promote approves a stage of manual approval for exactly one digest: the one
the stage is AwaitingApproval for (status.stages[].digest; see convoy get
pipelines). It records {stage, digest} in the Pipeline's spec.approvals, and
the controller pins the stage's Stacks to that digest. With --digest the
digest must be the one the stage awaits, so that what you reviewed is what you
approve; a stage that is not awaiting approval is refused.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Pipeline, o.Stage = args[0], args[1]
			return o.Run(cmd.Context(), s)
		},
	}
	o.add(cmd)
	cmd.Flags().StringVarP(&o.Namespace, "namespace", "n", "", "the Pipeline's namespace (default: the kubeconfig context's)")
	cmd.Flags().StringVar(&o.Digest, "digest", "", "the digest you reviewed; refused unless the stage awaits approval for it")
	return cmd
}

func (o promoteOptions) Run(ctx context.Context, s streams) error {
	c, err := controller.Connect(o.Kubeconfig, o.Context)
	if err != nil {
		return err
	}
	ns, err := o.namespace(o.Namespace)
	if err != nil {
		return err
	}
	d, err := controller.Promote(ctx, c, ns, o.Pipeline, o.Stage, o.Digest)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "Approved stage %s of Pipeline %s/%s for %s.\n", o.Stage, ns, o.Pipeline, d)
	return nil
}
