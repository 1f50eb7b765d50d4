package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/convoy-sh/convoy/internal/run"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
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
			opts, err := o.options(s)
			if err != nil {
				return err
			}
			session, err := run.Open(ctx, opts)
			if err != nil {
				return err
			}
			defer session.Close()
			rows, err := session.Status(ctx, run.StatusRequest{Selectors: selectors})
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
	var maxRevs int
	var showRollback bool
	format := helmOutputTable
	cmd := newStackCmd("history RELEASE", "Show a release's revisions (like helm history)", "", cobra.ExactArgs(1), &o,
		func(ctx context.Context, args []string) error {
			if maxRevs < 1 {
				return errors.New("--max must be at least 1")
			}
			opts, err := o.options(s)
			if err != nil {
				return err
			}
			session, err := run.Open(ctx, opts)
			if err != nil {
				return err
			}
			defer session.Close()
			_, h, err := session.History(ctx, args[0])
			if err != nil {
				return err
			}
			h = h[max(0, len(h)-maxRevs):]
			if format != helmOutputTable {
				return writeHistory(s.Out, format, h)
			}
			tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
			rollback := func(string) string { return "" }
			if showRollback {
				rollback = func(v string) string { return v + "\t" }
			}
			fmt.Fprintf(tw, "REVISION\tUPDATED\tSTATUS\tCHART\tAPP VERSION\t%sDESCRIPTION\n", rollback("ROLLBACK"))
			for _, r := range h {
				rb := ""
				if r.RollbackRevision > 0 {
					rb = strconv.Itoa(r.RollbackRevision)
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s%s\n", r.Version, r.Updated.Local().Format(time.ANSIC), r.Status, r.Chart, r.AppVersion, rollback(rb), r.Description)
			}
			return tw.Flush()
		})
	cmd.Flags().IntVar(&maxRevs, "max", 256, "show at most this many revisions, the newest (as helm history --max)")
	cmd.Flags().VarP(&format, "output", "o", "table, json or yaml (as helm history -o, with its fields)")
	cmd.Flags().BoolVar(&showRollback, "show-rollback-revision", false, "show the revision each rollback restored, in a ROLLBACK column (as helm history)")
	return cmd
}

// outputFormat is helm's -o: table, json or yaml.
type outputFormat string

const (
	helmOutputTable outputFormat = "table"
	helmOutputJSON  outputFormat = "json"
	helmOutputYAML  outputFormat = "yaml"
)

func (f *outputFormat) String() string { return string(*f) }
func (f *outputFormat) Type() string   { return "format" }
func (f *outputFormat) Set(s string) error {
	switch v := outputFormat(s); v {
	case helmOutputTable, helmOutputJSON, helmOutputYAML:
		*f = v
		return nil
	}
	return fmt.Errorf("%q is not table, json or yaml", s)
}

// writeHistory prints revisions as helm history -o json|yaml does, field
// for field, so scripts written for helm read it.
func writeHistory(w io.Writer, format outputFormat, h []run.Revision) error {
	type helmRevision struct {
		Revision    int       `json:"revision"`
		Updated     time.Time `json:"updated"`
		Status      string    `json:"status"`
		Chart       string    `json:"chart"`
		AppVersion  string    `json:"app_version"`
		Rollback    int       `json:"rollback_revision,omitempty"`
		Description string    `json:"description"`
	}
	out := make([]helmRevision, len(h))
	for i, r := range h {
		out[i] = helmRevision{Revision: r.Version, Updated: r.Updated, Status: r.Status, Chart: r.Chart, AppVersion: r.AppVersion, Rollback: r.RollbackRevision, Description: r.Description}
	}
	b, err := json.Marshal(out)
	if err == nil && format == helmOutputYAML {
		b, err = yaml.JSONToYAML(b)
	}
	if err != nil {
		return err
	}
	if format == helmOutputJSON {
		b = append(b, '\n')
	}
	_, err = w.Write(b)
	return err
}

type rollbackOptions struct {
	stackRun
	Timeout       time.Duration
	Wait          waitFlag
	WaitForJobs   bool
	CleanupOnFail bool
	NoHooks       bool
	HistoryMax    int
	Description   string
}

func newRollbackCmd(s streams) *cobra.Command {
	var o rollbackOptions
	var cmd *cobra.Command
	cmd = newStackCmd("rollback RELEASE [REVISION]", "Roll a release back to an earlier revision (default: the previous one)",
		`Rollback restores an earlier revision's chart, values and manifest as a new
revision, like helm rollback, with the release's wait, timeout, hooks,
cleanup_on_fail and history_max settings unless a flag overrides them.
It holds the stack's lock, so it never runs beside an apply of the stack.`,
		cobra.RangeArgs(1, 2), &o.stackRun,
		func(ctx context.Context, args []string) error {
			req := run.RollbackRequest{Release: args[0], Timeout: o.Timeout, CleanupOnFail: o.CleanupOnFail, NoHooks: o.NoHooks, Description: o.Description}
			if len(args) == 2 {
				n, err := strconv.Atoi(args[1])
				if err != nil || n <= 0 {
					return fmt.Errorf("revision %q is not a positive number", args[1])
				}
				req.Revision = n
			}
			if o.Timeout < 0 {
				return errors.New("--timeout must not be negative")
			}
			if len(o.Description) > 256 {
				return fmt.Errorf("--description is %d characters long, longer than 256", len(o.Description))
			}
			req.Wait = o.Wait.override(o.WaitForJobs)
			if cmd.Flags().Changed("history-max") {
				if o.HistoryMax < 0 {
					return errors.New("--history-max must be 0 (unlimited) or a positive number")
				}
				req.HistoryMax = &o.HistoryMax
			}
			opts, err := o.writerOptions(s)
			if err != nil {
				return err
			}
			opts.Clusters.Observer = run.LogEvents(s.Err)
			session, err := run.Open(ctx, opts)
			if err != nil {
				return err
			}
			defer session.Close()
			inst, rel, err := session.Rollback(ctx, req)
			switch {
			case rel != nil && err == nil:
				fmt.Fprintf(s.Out, "Rollback was a success: %s is at revision %d (%s).\n", inst.Name, rel.Version, rel.Description)
			case rel != nil:
				fmt.Fprintf(s.Out, "%s is at revision %d, %s (%s).\n", inst.Name, rel.Version, rel.Status, rel.Description)
			}
			return err
		})
	f := cmd.Flags()
	f.DurationVar(&o.Timeout, "timeout", 0, "how long each wait may take (hooks, resources; as helm rollback --timeout; default: the release's timeout, else 5m0s)")
	f.Var(&o.Wait, "wait", "wait until the restored objects are ready: --wait, --wait=true or false (Helm's watcher and legacy mean true, hookOnly false; default: the release's wait)")
	f.Lookup("wait").NoOptDefVal = "true"
	f.BoolVar(&o.WaitForJobs, "wait-for-jobs", false, "when waiting, also wait until Jobs complete (as helm rollback --wait-for-jobs; default: the release's wait_for_jobs)")
	f.BoolVar(&o.CleanupOnFail, "cleanup-on-fail", false, "delete the objects this rollback created when it fails (as helm rollback; default: the release's cleanup_on_fail)")
	f.BoolVar(&o.NoHooks, "no-hooks", false, "run no rollback hooks (as helm rollback; default: the release's disable_hooks)")
	f.IntVar(&o.HistoryMax, "history-max", 0, "keep at most this many revisions, 0 for no limit (as helm rollback; default: the release's history_max)")
	f.StringVar(&o.Description, "description", "", "the new revision's description (at most 256 characters; default \"Rollback to N\")")
	addPlainProgressFlag(f)
	return cmd
}

// waitFlag is rollback's --wait: unset (the release's setting), on or off.
// It accepts Helm 4's wait strategies: watcher and legacy wait, hookOnly
// does not.
type waitFlag struct {
	set, on bool
}

func (w *waitFlag) String() string {
	switch {
	case !w.set:
		return ""
	case w.on:
		return "true"
	}
	return "false"
}

func (w *waitFlag) Set(v string) error {
	switch strings.ToLower(v) {
	case "true", "watcher", "legacy":
		w.set, w.on = true, true
	case "false", "hookonly":
		w.set, w.on = true, false
	default:
		return fmt.Errorf("%q is neither true nor false (nor one of Helm's watcher, legacy, hookOnly)", v)
	}
	return nil
}

func (w *waitFlag) Type() string { return "bool" }

// override is what --wait and --wait-for-jobs say of the release's wait.
func (w waitFlag) override(forJobs bool) run.WaitOverride {
	switch {
	case w.set && !w.on:
		return run.WaitOff
	case w.set && forJobs:
		return run.WaitOnWithJobs
	case w.set:
		return run.WaitOn
	case forJobs:
		return run.WaitJobsIfWaiting
	}
	return run.WaitAsRelease
}

func newRecoverCmd(s streams) *cobra.Command {
	var o stackRun
	cmd := newStackCmd("recover RELEASE", "Resolve a release left pending by a crashed operation",
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
			opts, err := o.writerOptions(s)
			if err != nil {
				return err
			}
			session, err := run.Open(ctx, opts)
			if err != nil {
				return err
			}
			defer session.Close()
			inst, rel, err := session.Recover(ctx, args[0])
			if rel != nil {
				fmt.Fprintf(s.Out, "%s revision %d is now failed: %s\n", inst.Name, rel.Version, rel.Description)
			}
			return err
		})
	addPlainProgressFlag(cmd.Flags())
	return cmd
}

func newForceUnlockCmd(s streams) *cobra.Command {
	var o stackRun
	var force bool
	cmd := newStackCmd("force-unlock [LOCK_ID]", "Release the stack's lock left by a run that died",
		`Only one run that changes a stack (apply, destroy, rollback, recover) runs
at a time: it holds a coordination.k8s.io Lease on every cluster the stack
uses, renewed every few seconds. A holder that is gone is taken over by the
next run on its own: at once on the same host when its process no longer
exists, and from anywhere once it has not renewed the lock for 30s.
Otherwise the next run refuses, naming the holder and the lock's id. Make
sure that holder is really gone, then run force-unlock with that id; a lock
with another id (a run that started since) is left alone. Without an id,
the lock is released whoever holds it. A lock whose holder's process is
running on this host (an apply under way, or stopped) is left alone
unless --force is given.`,
		cobra.MaximumNArgs(1), &o,
		func(ctx context.Context, args []string) error {
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			opts, err := o.options(s)
			if err != nil {
				return err
			}
			session, err := run.Open(ctx, opts)
			if err != nil {
				return err
			}
			defer session.Close()
			out, err := session.ForceUnlock(ctx, id, force)
			for _, u := range out {
				if u.Holder == "" {
					fmt.Fprintf(s.Out, "Stack %q was not locked on %s.\n", u.Stack, u.Cluster.Describe())
				} else {
					fmt.Fprintf(s.Out, "Released the lock of stack %q on %s (held by %s).\n", u.Stack, u.Cluster.Describe(), u.Holder)
				}
			}
			return err
		})
	cmd.Flags().BoolVar(&force, "force", false, "release the lock even when its holder's process is running on this host")
	return cmd
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
			opts, err := o.writerOptions(s)
			if err != nil {
				return err
			}
			session, err := run.Open(ctx, opts)
			if err != nil {
				return err
			}
			defer session.Close()
			res, err := session.Destroy(ctx, run.ApplyRequest{
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
	addIncludeDependentsFlag(cmd.Flags(), &o.Selection)
	return cmd
}
