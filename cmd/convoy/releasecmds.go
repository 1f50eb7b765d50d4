package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/convoy-sh/convoy/internal/run"
	"github.com/spf13/cobra"
)

// newStackCmd is a command over the stack's releases on their clusters.
func newStackCmd(use, short, long string, args cobra.PositionalArgs, o *stackRun, runE func(ctx context.Context, args []string) error) *cobra.Command {
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long, Args: args,
		RunE: func(cmd *cobra.Command, args []string) error { return runE(cmd.Context(), args) },
	}
	addStackRunFlags(cmd.Flags(), o)
	if strings.Contains(use, " RELEASE") {
		cmd.ValidArgsFunction = completeReleases(&o.Stack, true)
	}
	return cmd
}

func newStatusCmd(s streams) *cobra.Command {
	var o stackRun
	var selectors []string
	cmd := newStackCmd("status", "Show every release of the stack: revision, status, chart, last update", "", cobra.NoArgs, &o,
		func(ctx context.Context, _ []string) error {
			rows, err := run.Status(ctx, o.options(s), run.StatusRequest{Selectors: selectors})
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "RELEASE\tNAMESPACE\tREVISION\tSTATUS\tCHART\tAPP VERSION\tUPDATED")
			for _, r := range rows {
				inst, last := r.Instance, r.Last
				if last == nil {
					fmt.Fprintf(tw, "%s\t%s\t-\tnot installed\t\t\t\n", inst.Name, inst.Namespace)
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", inst.Name, inst.Namespace, last.Version, last.Status, last.Chart, last.AppVersion, last.Updated.Local().Format(time.DateTime))
			}
			return tw.Flush()
		})
	addSelectorFlag(cmd.Flags(), &selectors, "show only")
	addParallelismFlag(cmd.Flags(), &o.Parallelism, "how many release records are read at once")
	return cmd
}

func newHistoryCmd(s streams) *cobra.Command {
	var o stackRun
	return newStackCmd("history RELEASE", "Show a release's revisions (like helm history)", "", cobra.ExactArgs(1), &o,
		func(ctx context.Context, args []string) error {
			_, h, err := run.History(ctx, o.options(s), args[0])
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "REVISION\tUPDATED\tSTATUS\tCHART\tAPP VERSION\tDESCRIPTION")
			for _, r := range h {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.Version, r.Updated.Local().Format(time.ANSIC), r.Status, r.Chart, r.AppVersion, r.Description)
			}
			return tw.Flush()
		})
}

func newRollbackCmd(s streams) *cobra.Command {
	var o stackRun
	return newStackCmd("rollback RELEASE [REVISION]", "Roll a release back to an earlier revision (default: the previous one)",
		`Rollback restores an earlier revision's chart, values and manifest as a new
revision, like helm rollback, with the release's wait and timeout settings.
It holds the stack's lock, so it never runs beside an apply of the stack.`,
		cobra.RangeArgs(1, 2), &o,
		func(ctx context.Context, args []string) error {
			revision := 0
			if len(args) == 2 {
				n, err := strconv.Atoi(args[1])
				if err != nil || n <= 0 {
					return fmt.Errorf("revision %q is not a positive number", args[1])
				}
				revision = n
			}
			opts := o.writerOptions(s)
			opts.Clusters.Observer = run.LogEvents(s.Err)
			inst, rel, err := run.Rollback(ctx, opts, args[0], revision)
			switch {
			case rel != nil && err == nil:
				fmt.Fprintf(s.Out, "Rollback was a success: %s is at revision %d (%s).\n", inst.Name, rel.Version, rel.Description)
			case rel != nil:
				fmt.Fprintf(s.Out, "%s is at revision %d, %s (%s).\n", inst.Name, rel.Version, rel.Status, rel.Description)
			}
			return err
		})
}

func newRecoverCmd(s streams) *cobra.Command {
	var o stackRun
	return newStackCmd("recover RELEASE", "Resolve a release left pending by a crashed operation",
		`A release whose newest revision is pending-install, pending-upgrade,
pending-rollback or uninstalling is locked: convoy and helm refuse to touch it,
because another operation may be running. When none is (the operation
crashed), recover marks that revision failed, saying what was interrupted, so
the next apply can proceed. It holds the stack's lock, so it never runs
beside an apply of the stack. Apply does this on its own for records a run of
the stack left pending when that run is provably gone (it no longer holds the
lock); recover is for the rest.`,
		cobra.ExactArgs(1), &o,
		func(ctx context.Context, args []string) error {
			inst, rel, err := run.Recover(ctx, o.writerOptions(s), args[0])
			if rel != nil {
				fmt.Fprintf(s.Out, "%s revision %d is now failed: %s\n", inst.Name, rel.Version, rel.Description)
			}
			return err
		})
}

func newForceUnlockCmd(s streams) *cobra.Command {
	var o stackRun
	return newStackCmd("force-unlock [LOCK_ID]", "Release the stack's lock left by a run that died",
		`Only one run that changes a stack (apply, destroy, rollback, recover) runs
at a time: it holds a coordination.k8s.io Lease on every cluster the stack
uses, renewed every few seconds. A holder that is gone is taken over by the
next run on its own: at once on the same host when its process no longer
exists, and from anywhere once it has not renewed the lock for 30s.
Otherwise the next run refuses, naming the holder and the lock's id. Make
sure that holder is really gone, then run force-unlock with that id; a lock
with another id (a run that started since) is left alone. Without an id,
the lock is released whoever holds it.`,
		cobra.MaximumNArgs(1), &o,
		func(ctx context.Context, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			out, err := run.ForceUnlock(ctx, o.options(s), id)
			for _, u := range out {
				if u.Holder == "" {
					fmt.Fprintf(s.Out, "Stack %q was not locked on %s.\n", u.Stack, u.Cluster.Describe())
				} else {
					fmt.Fprintf(s.Out, "Released the lock of stack %q on %s (held by %s).\n", u.Stack, u.Cluster.Describe(), u.Holder)
				}
			}
			return err
		})
}

type destroyOptions struct {
	stackRun
	AutoApprove bool
	KeepHistory bool
	NoProgress  bool
	View        planViewFlags
	Selection   selectionFlags
}

func newDestroyCmd(s streams) *cobra.Command {
	var o destroyOptions
	cmd := newStackCmd("destroy", "Uninstall every release of the stack in reverse dependency order",
		`Destroy plans the uninstall of every release of the stack (and of releases
the stack deployed that its files no longer name), shows the plan, asks,
and uninstalls them, dependents first.`,
		cobra.NoArgs, &o.stackRun,
		func(ctx context.Context, _ []string) error {
			if o.Parallelism < 1 {
				return errors.New("--parallelism must be at least 1")
			}
			res, err := run.Destroy(ctx, o.writerOptions(s), run.ApplyRequest{
				Plan:        o.Selection.request(),
				KeepHistory: o.KeepHistory,
				Review:      reviewPlan(s, o.View, o.AutoApprove, "Destroy these releases?"),
				Progress:    newProgress(s, o.NoProgress),
			})
			return finish(s, res, err)
		})
	cmd.Flags().BoolVar(&o.AutoApprove, "auto-approve", false, "destroy without asking for confirmation (required when not on a terminal)")
	cmd.Flags().BoolVar(&o.KeepHistory, "keep-history", false, "keep the release records, marked uninstalled")
	addRunFlags(cmd.Flags(), &o.Parallelism, &o.NoProgress)
	addPlanViewFlags(cmd.Flags(), &o.View)
	addSelectionFlags(cmd.Flags(), &o.Selection, "destroy")
	return cmd
}
