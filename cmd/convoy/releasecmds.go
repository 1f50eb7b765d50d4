package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/convoy-sh/convoy/internal/apply"
	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/release"
	"github.com/spf13/cobra"
)

// findInstance finds a stack's release by address (release.api["eu"]) or
// by Helm release name.
func findInstance(st *config.Stack, arg string) (*config.ReleaseInstance, error) {
	var names []string
	for _, r := range st.Releases {
		if r.Addr.String() == arg || r.Name == arg {
			return r, nil
		}
		names = append(names, r.Name)
	}
	return nil, fmt.Errorf("stack %q has no release %q (releases: %v)", st.Name, arg, names)
}

// oneRelease loads the stack and connects to the cluster of one of its
// releases (named by address or Helm name).
func oneRelease(ctx context.Context, f stackFlags, c clusterFlags, s streams, name string, observe func(release.Event)) (*config.ReleaseInstance, *release.Engine, error) {
	st, _, err := loadOrdered(ctx, f, s)
	if err != nil {
		return nil, nil, err
	}
	inst, err := findInstance(st, name)
	if err != nil {
		return nil, nil, err
	}
	eng, err := newEngines(c, observe).forCluster(ctx, inst.Cluster)
	return inst, eng, err
}

func chartLabel(r *release.Release) string {
	if r.Chart == nil || r.Chart.Metadata == nil {
		return ""
	}
	return r.Chart.Metadata.Name + "-" + r.Chart.Metadata.Version
}

// --- status ---

type statusOptions struct {
	Stack   stackFlags
	Cluster clusterFlags
}

func newStatusCmd(s streams) *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show every release of the stack: revision, status, chart, last update",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context(), s) },
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	addClusterFlags(cmd.Flags(), &o.Cluster)
	return cmd
}

func (o statusOptions) Run(ctx context.Context, s streams) error {
	st, order, err := loadOrdered(ctx, o.Stack, s)
	if err != nil {
		return err
	}
	engines := newEngines(o.Cluster, nil)
	tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RELEASE\tNAMESPACE\tREVISION\tSTATUS\tCHART\tAPP VERSION\tUPDATED")
	for _, addr := range order {
		inst := st.Release(addr)
		eng, err := engines.forCluster(ctx, inst.Cluster)
		if err != nil {
			return err
		}
		last, err := eng.Storage(inst.Namespace).Last(ctx, inst.Name)
		if errors.Is(err, release.ErrReleaseNotFound) {
			fmt.Fprintf(tw, "%s\t%s\t-\tnot installed\t\t\t\n", inst.Name, inst.Namespace)
			continue
		}
		if err != nil {
			return err
		}
		app := ""
		if last.Chart != nil && last.Chart.Metadata != nil {
			app = last.Chart.Metadata.AppVersion
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", inst.Name, inst.Namespace, last.Version, last.Info.Status, chartLabel(last), app, last.Info.LastDeployed.Local().Format(time.DateTime))
	}
	return tw.Flush()
}

// --- history ---

type historyOptions struct {
	Stack   stackFlags
	Cluster clusterFlags
}

func newHistoryCmd(s streams) *cobra.Command {
	var o historyOptions
	cmd := &cobra.Command{
		Use:   "history RELEASE",
		Short: "Show a release's revisions (like helm history)",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return o.Run(cmd.Context(), s, args[0]) },
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	addClusterFlags(cmd.Flags(), &o.Cluster)
	return cmd
}

func (o historyOptions) Run(ctx context.Context, s streams, name string) error {
	inst, eng, err := oneRelease(ctx, o.Stack, o.Cluster, s, name, nil)
	if err != nil {
		return err
	}
	h, err := eng.Storage(inst.Namespace).History(ctx, inst.Name)
	if err != nil {
		return err
	}
	if len(h) == 0 {
		return fmt.Errorf("release %s (namespace %s): %w", inst.Name, inst.Namespace, release.ErrReleaseNotFound)
	}
	tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tUPDATED\tSTATUS\tCHART\tAPP VERSION\tDESCRIPTION")
	for _, r := range h {
		app := ""
		if r.Chart != nil && r.Chart.Metadata != nil {
			app = r.Chart.Metadata.AppVersion
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.Version, r.Info.LastDeployed.Local().Format(time.ANSIC), r.Info.Status, chartLabel(r), app, r.Info.Description)
	}
	return tw.Flush()
}

// --- rollback ---

type rollbackOptions struct {
	Stack   stackFlags
	Cluster clusterFlags
}

func newRollbackCmd(s streams) *cobra.Command {
	var o rollbackOptions
	cmd := &cobra.Command{
		Use:   "rollback RELEASE [REVISION]",
		Short: "Roll a release back to an earlier revision (default: the previous one)",
		Long: `Rollback restores an earlier revision's chart, values and manifest as a new
revision, like helm rollback, with the release's wait and timeout settings.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error { return o.Run(cmd.Context(), s, args) },
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	addClusterFlags(cmd.Flags(), &o.Cluster)
	return cmd
}

func (o rollbackOptions) Run(ctx context.Context, s streams, args []string) error {
	revision := 0
	if len(args) == 2 {
		n, err := strconv.Atoi(args[1])
		if err != nil || n <= 0 {
			return fmt.Errorf("revision %q is not a positive number", args[1])
		}
		revision = n
	}
	inst, eng, err := oneRelease(ctx, o.Stack, o.Cluster, s, args[0], logTo(s.Err))
	if err != nil {
		return err
	}
	wait := release.WaitNone
	if inst.Wait {
		wait = release.WaitReady
		if inst.WaitForJobs {
			wait = release.WaitReadyAndJobs
		}
	}
	rel, err := eng.Rollback(ctx, release.RollbackRequest{
		Name: inst.Name, Namespace: inst.Namespace, Revision: revision,
		Wait: wait, Timeout: inst.Timeout, DisableHooks: inst.DisableHooks,
		CleanupOnFail: inst.CleanupOnFail, HistoryMax: inst.HistoryMax,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "Rollback was a success: %s is at revision %d (%s).\n", inst.Name, rel.Version, rel.Info.Description)
	return nil
}

// --- recover ---

type recoverOptions struct {
	Stack   stackFlags
	Cluster clusterFlags
}

func newRecoverCmd(s streams) *cobra.Command {
	var o recoverOptions
	cmd := &cobra.Command{
		Use:   "recover RELEASE",
		Short: "Resolve a release left pending by a crashed operation",
		Long: `A release whose newest revision is pending-install, pending-upgrade,
pending-rollback or uninstalling is locked: convoy and helm refuse to touch it,
because another operation may be running. When none is (the operation
crashed), recover marks that revision failed, saying what was interrupted, so
the next apply can proceed. Make sure no other apply is running first.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.Run(cmd.Context(), s, args[0]) },
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	addClusterFlags(cmd.Flags(), &o.Cluster)
	return cmd
}

func (o recoverOptions) Run(ctx context.Context, s streams, name string) error {
	inst, eng, err := oneRelease(ctx, o.Stack, o.Cluster, s, name, nil)
	if err != nil {
		return err
	}
	rel, err := eng.Recover(ctx, inst.Name, inst.Namespace)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "%s revision %d is now failed: %s\n", inst.Name, rel.Version, rel.Info.Description)
	return nil
}

// --- destroy ---

type destroyOptions struct {
	Stack       stackFlags
	Cluster     clusterFlags
	AutoApprove bool
	KeepHistory bool
	Parallelism int
	NoProgress  bool
}

func newDestroyCmd(s streams) *cobra.Command {
	var o destroyOptions
	cmd := &cobra.Command{
		Use:   "destroy",
		Short: "Uninstall every release of the stack in reverse dependency order",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context(), s) },
	}
	addStackFlags(cmd.Flags(), &o.Stack)
	addClusterFlags(cmd.Flags(), &o.Cluster)
	cmd.Flags().BoolVar(&o.AutoApprove, "auto-approve", false, "destroy without asking for confirmation (required when not on a terminal)")
	cmd.Flags().BoolVar(&o.KeepHistory, "keep-history", false, "keep the release records, marked uninstalled")
	addRunFlags(cmd.Flags(), &o.Parallelism, &o.NoProgress)
	return cmd
}

func (o destroyOptions) Run(ctx context.Context, s streams) error {
	st, order, err := loadOrdered(ctx, o.Stack, s)
	if err != nil {
		return err
	}
	fwd := &forwarder{}
	engines := newEngines(o.Cluster, fwd.event)
	unlock, err := lockStack(ctx, st, engines, "convoy destroy")
	if err != nil {
		return err
	}
	defer unlock()
	// Reverse walk: a release is uninstalled after everything that
	// depends on it.
	var forward []apply.Node
	steps := map[string]*apply.Step{}
	for _, addr := range order {
		inst := st.Release(addr)
		eng, err := engines.forCluster(ctx, inst.Cluster)
		if err != nil {
			return err
		}
		n := apply.Node{ID: addr.String()}
		for _, d := range inst.DependsOn {
			n.DependsOn = append(n.DependsOn, d.Addr.String())
		}
		forward = append(forward, n)
		steps[n.ID] = &apply.Step{
			ID: n.ID, Name: inst.Name, Namespace: inst.Namespace, Kind: apply.StepUninstall, Engine: eng,
			Uninstall: release.UninstallRequest{
				Name: inst.Name, Namespace: inst.Namespace, KeepHistory: o.KeepHistory,
				DisableHooks: inst.DisableHooks, Wait: true, Timeout: inst.Timeout,
			},
		}
	}
	var ordered []*apply.Step
	for _, n := range apply.Reverse(forward) {
		st := steps[n.ID]
		st.DependsOn = n.DependsOn
		ordered = append(ordered, st)
	}
	// The plan: what is installed gets uninstalled, dependents first.
	n := 0
	fmt.Fprintf(s.Out, "convoy will destroy stack %q:\n\n", st.Name)
	for _, step := range ordered {
		last, err := step.Engine.Storage(step.Namespace).Last(ctx, step.Name)
		switch {
		case errors.Is(err, release.ErrReleaseNotFound):
			step.Kind = apply.StepNoOp
			fmt.Fprintf(s.Out, "    %s (not installed)\n", step.ID)
		case err != nil:
			return err
		default:
			n++
			fmt.Fprintf(s.Out, "  - %s (uninstall) namespace %s, revision %d %s, chart %s\n", step.ID, step.Namespace, last.Version, last.Info.Status, chartLabel(last))
		}
	}
	fmt.Fprintf(s.Out, "\nPlan: %d to uninstall.\n", n)
	if n == 0 {
		return nil
	}
	if err := confirm(s, o.AutoApprove, "Destroy these releases?"); err != nil {
		return err
	}
	progress := newProgress(s, o.NoProgress, ordered)
	fwd.set(progress)
	results := apply.Execute(ctx, ordered, apply.ExecOptions{Parallelism: o.Parallelism, Progress: progress})
	progress.Close()
	fwd.set(nil)
	writeResults(s.Out, results, nil)
	for _, r := range results {
		if r.Status != apply.Succeeded {
			return errSilent
		}
	}
	return nil
}
