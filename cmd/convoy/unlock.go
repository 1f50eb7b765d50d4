package main

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/convoy-sh/convoy/internal/apply"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/spf13/cobra"
)

type forceUnlockOptions struct {
	Stack   stackFlags
	Cluster clusterFlags
}

func newForceUnlockCmd(s streams) *cobra.Command {
	var o forceUnlockOptions
	cmd := &cobra.Command{
		Use:   "force-unlock",
		Short: "Release the stack's lock left by an apply that died",
		Long: `Only one apply or destroy of a stack runs at a time: it holds a
coordination.k8s.io Lease on every cluster the stack uses. If a run died
without releasing it, the next one refuses and names the holder. Make sure
that holder is really gone, then run force-unlock.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context(), s) },
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	addClusterFlags(cmd.Flags(), &o.Cluster)
	return cmd
}

func (o forceUnlockOptions) Run(ctx context.Context, s streams) error {
	st, _, err := loadOrdered(ctx, o.Stack, s)
	if err != nil {
		return err
	}
	engines := newEngines(o.Cluster, nil)
	clusters := plan.Clusters(st)
	for _, key := range slices.Sorted(maps.Keys(clusters)) {
		eng, err := engines.forCluster(ctx, clusters[key])
		if err != nil {
			return err
		}
		holder, err := apply.ForceUnlock(ctx, eng.Client(), st.Name)
		if err != nil {
			return err
		}
		where := "the default cluster"
		if key != "" {
			where = "cluster " + key
		}
		if holder == "" {
			fmt.Fprintf(s.Out, "Stack %q was not locked on %s.\n", st.Name, where)
		} else {
			fmt.Fprintf(s.Out, "Released the lock of stack %q on %s (held by %s).\n", st.Name, where, holder)
		}
	}
	return nil
}
