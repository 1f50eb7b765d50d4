package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/spf13/cobra"
)

type promoteOptions struct {
	kubeFlags
	Namespace, Pipeline, Stage, Digest string
}

// newPromoteCmd is `convoy promote` in its two modes: PIPELINE STAGE
// approves a Pipeline's manual stage (the controller promotes);
// --from-env/--to-env promotes between two environments of a stack without
// a controller (promoteenv.go).
func newPromoteCmd(s streams) *cobra.Command {
	var o promoteOptions
	var env promoteEnvOptions
	cmd := &cobra.Command{
		Use:   "promote (PIPELINE STAGE | --from-env SOURCE --to-env TARGET)",
		Short: "Approve a Pipeline's manual stage, or promote the charts one environment deployed to another",
		Long: `With PIPELINE STAGE, promote approves a stage of manual approval for exactly
one digest: the one the stage is AwaitingApproval for (status.stages[].digest;
see convoy get pipelines). It records {stage, digest} in the Pipeline's
spec.approvals, and the controller pins the stage's Stacks to that digest.
With --digest the digest must be the one the stage awaits, so that what you
reviewed is what you approve; a stage that is not awaiting approval is
refused. (docs/pipelines.md.)

` + promoteEnvLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			envMode := cmd.Flags().Changed("from-env") || cmd.Flags().Changed("to-env")
			switch {
			case len(args) == 2 && !envMode:
				if cmd.Flags().Changed("env") {
					return errors.New("promote PIPELINE STAGE approves a Pipeline's stage: --env is for promotions between environments (--from-env, --to-env)")
				}
				o.Pipeline, o.Stage = args[0], args[1]
				o.Kubeconfig, o.Context = env.Cluster.Kubeconfig, env.Cluster.Context
				return o.Run(cmd.Context(), s)
			case len(args) == 0 && envMode:
				if cmd.Flags().Changed("digest") || cmd.Flags().Changed("namespace") {
					return errors.New("--digest and --namespace name a Pipeline's stage (promote PIPELINE STAGE); a promotion between environments takes neither")
				}
				if cmd.Flags().Changed("env") {
					return errors.New("promote chooses its environments with --from-env and --to-env, not --env")
				}
				return env.Run(cmd.Context(), s)
			case envMode:
				return fmt.Errorf("promote --from-env/--to-env takes no arguments (got %q); promote PIPELINE STAGE takes no --from-env/--to-env", strings.Join(args, " "))
			default:
				return fmt.Errorf("promote takes PIPELINE STAGE (a Pipeline's manual stage) or --from-env and --to-env (two environments of a stack); got %d arguments", len(args))
			}
		},
	}
	addPromoteEnvFlags(cmd.Flags(), &env)
	_ = cmd.RegisterFlagCompletionFunc("from-env", completeEnvironments)
	_ = cmd.RegisterFlagCompletionFunc("to-env", completeEnvironments)
	cmd.Flags().StringVarP(&o.Namespace, "namespace", "n", "", "PIPELINE STAGE: the Pipeline's namespace (default: the kubeconfig context's)")
	cmd.Flags().StringVar(&o.Digest, "digest", "", "PIPELINE STAGE: the digest you reviewed; refused unless the stage awaits approval for it")
	return cmd
}

func (o promoteOptions) Run(ctx context.Context, s streams) error {
	c, ns, err := o.connect(o.Namespace)
	if err != nil {
		return err
	}
	d, err := ctl.Promote(ctx, c, ns, o.Pipeline, o.Stage, o.Digest)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "Approved stage %s of Pipeline %s/%s for %s.\n", o.Stage, ns, o.Pipeline, d)
	return nil
}
