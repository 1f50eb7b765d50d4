package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/run/apply"
	"github.com/convoy-sh/convoy/internal/run/progress"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

type applyOptions struct {
	stackRun
	AutoApprove   bool
	Atomic        bool
	NoProgress    bool
	PlanFile      string
	View          planViewFlags
	Selection     selectionFlags
	Refresh       string
	AllowPolicies []string
	Stats         bool
	SkipNoOp      bool
}

func newApplyCmd(s streams) *cobra.Command {
	var o applyOptions
	cmd := &cobra.Command{
		Use:   "apply [PLAN_FILE]",
		Short: "Install or upgrade every release of the stack in dependency order",
		Long: `Apply computes and shows the plan (or takes a plan saved with convoy plan
--out, refusing it if anything it observed has changed since), asks for
confirmation on a terminal, and applies it: every release of the stack is
installed or upgraded (unchanged ones are left alone), in
dependency order and in parallel where the graph allows, with Helm's hooks,
waits and atomic rollback. A release whose dependency failed is skipped;
independent releases go on. Releases this stack deployed earlier that are no
longer in its files are uninstalled when everything else succeeded. With
--atomic (or atomic = true in the stack block) a failure rolls back every
release this run changed. One apply per stack runs at a time.

A saved plan is applied with the stack directory and the variable values it
was made with, from any directory: -C, --var, --var-file and CONVOY_VAR_*
are not needed, and any given must agree with the plan's.`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completePlanFiles,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.PlanFile = args[0]
				if !cmd.Flags().Changed("dir") {
					o.Stack.Dir = "" // the plan's own directory
				}
			}
			return o.Run(cmd.Context(), s)
		},
	}
	addStackRunFlags(cmd.Flags(), &o.stackRun)
	addRunFlags(cmd.Flags(), &o.Parallelism, &o.NoProgress)
	cmd.Flags().BoolVar(&o.AutoApprove, "auto-approve", false, "apply without asking for confirmation (required when not on a terminal)")
	addForceConflictsFlag(cmd.Flags())
	cmd.Flags().BoolVar(&o.Atomic, "atomic", false, "if any release fails, roll back every release changed in this run (as helm 3 --atomic)")
	cmd.Flags().BoolVar(&o.Atomic, "rollback-on-failure", false, "the same as --atomic (helm 4's name)")
	addPlanViewFlags(cmd.Flags(), &o.View)
	addSelectionFlags(cmd.Flags(), &o.Selection, "apply")
	addRefreshFlag(cmd.Flags(), &o.Refresh)
	addSkipNoOpFlag(cmd.Flags(), &o.SkipNoOp)
	addAllowPolicyFlag(cmd.Flags(), &o.AllowPolicies)
	addKubeVersionFlag(cmd.Flags(), &o.KubeVersion)
	cmd.Flags().BoolVar(&o.Stats, "stats", false, "print what the apply cost on stderr: API requests by verb and resource, bytes, time waiting on the client's rate limiter (--kube-qps, --kube-burst), in hooks and writing release records")
	_ = cmd.RegisterFlagCompletionFunc("target", completeReleases(&o.Stack, false))
	return cmd
}

// addForceConflictsFlag keeps --force-conflicts accepted, with a warning:
// apply always takes over the fields the stack's objects set.
func addForceConflictsFlag(fs *pflag.FlagSet) {
	fs.Bool("force-conflicts", false, "")
	_ = fs.MarkDeprecated("force-conflicts", "apply always takes over the fields the stack's objects set; ignore_changes leaves fields to others")
}

func addRunFlags(fs *pflag.FlagSet, parallelism *int, noProgress *bool) {
	addParallelismFlag(fs, parallelism, "how many releases may be applied at once")
	fs.BoolVar(noProgress, "no-progress", false, "plain timestamped log lines instead of the live view on a terminal")
}

// addPlainProgressFlag gives --no-progress to the commands that run
// releases without a live view (rollback, recover, test): their output is
// plain lines already, and scripts pass the same flags to every command
// that runs releases.
func addPlainProgressFlag(fs *pflag.FlagSet) {
	fs.Bool("no-progress", false, "accepted as apply takes it: this command always writes plain log lines")
}

func (o applyOptions) Run(ctx context.Context, s streams) error {
	if o.Parallelism < 1 {
		return errors.New("--parallelism must be at least 1")
	}
	if o.PlanFile != "" && (o.Selection.any() || o.Selection.IncludeDeps) {
		return errors.New("--target, -l and --include-deps apply to a plan computed now; a saved plan keeps the targets it was made with")
	}
	if o.PlanFile != "" && o.SkipNoOp {
		return errors.New("--skip-no-op-upgrades applies to a plan computed now; a saved plan keeps what it was planned with")
	}
	req := o.Selection.request()
	req.AllowPolicies = o.AllowPolicies
	req.SkipNoOpUpgrades = o.SkipNoOp
	var err error
	if req.Refresh, err = run.ParseRefresh(o.Refresh); err != nil {
		return err
	}
	var saved *run.SavedPlan
	if o.PlanFile != "" {
		if saved, err = run.ReadPlanFile(o.PlanFile); err != nil {
			return err
		}
	}
	opts, err := o.writerOptions(s)
	if err != nil {
		return err
	}
	var traffic run.Traffic
	var timings run.Timings
	if o.Stats {
		opts.Clusters.Traffic = &traffic
		opts.Clusters.Timings = &timings
		start := time.Now()
		defer func() { writeApplyStats(s.Err, time.Since(start), &traffic, &timings) }()
	}
	// The stack a saved plan was made from, else the one -C names.
	session, err := run.OpenSaved(ctx, opts, saved)
	if err != nil {
		return err
	}
	defer session.Close()
	res, err := session.Apply(ctx, run.ApplyRequest{
		Saved:    saved,
		Plan:     req,
		Atomic:   o.Atomic,
		Review:   reviewPlan(s, o.View, o.AutoApprove, "Apply this plan?"),
		Progress: newProgress(s, o.NoProgress),
	})
	var denied *plan.PolicyError
	if errors.As(err, &denied) && res != nil && res.Plan != nil && saved == nil {
		// Refused before review: show what was denied, in full.
		if werr := o.View.text(s.Out, res.Plan); werr != nil {
			return werr
		}
	}
	return finish(s, res, err)
}

// writeApplyStats prints apply --stats: one line, as plan's. Durations of
// concurrent releases add up, so rate-limit-wait, hooks and records can exceed
// the wall time; rate-limited counts the requests the client-side rate
// limiters held back.
func writeApplyStats(w io.Writer, wall time.Duration, t *run.Traffic, tm *run.Timings) {
	fmt.Fprintf(w, "stats: wall=%s requests=%d (get=%d list=%d patch=%d other=%d) bytes=%d rate-limit-wait=%s rate-limited=%d hooks=%s records=%s by kind: %s\n",
		wall.Round(time.Millisecond), t.Requests.Load(), t.Get.Load(), t.List.Load(), t.Patch.Load(), t.Other.Load(), t.Bytes.Load(),
		time.Duration(t.RateLimits.Wait.Load()).Round(time.Millisecond), t.RateLimits.Delayed.Load(),
		time.Duration(tm.Hooks.Load()).Round(time.Millisecond),
		time.Duration(tm.Records.Load()).Round(time.Millisecond),
		t.ByKind())
}

// reviewPlan prints a computed plan and, when it changes anything, asks
// for confirmation.
func reviewPlan(s streams, v planViewFlags, autoApprove bool, question string) func(*plan.Plan) error {
	return func(p *plan.Plan) error {
		if err := v.text(s.Out, p); err != nil {
			return err
		}
		if !p.HasChanges() {
			return nil
		}
		return confirm(s, autoApprove, question)
	}
}

// finish prints a run's results, also when an error followed them (the
// stack lock could not be released); a failed step ends the command with 1.
func finish(s streams, res *run.Applied, err error) error {
	if res == nil || len(res.Releases) == 0 {
		return err
	}
	writeResults(s.Out, res.Releases, res.Plan)
	if err == nil && res.Failed() {
		return errSilent
	}
	return err
}

// isTerminal reports whether r (or w) is an interactive terminal.
func isTerminal(r any) bool {
	f, ok := fileOf(r)
	return ok && term.IsTerminal(int(f.Fd()))
}

// confirm asks on a terminal; refuses without one unless auto-approved.
func confirm(s streams, autoApprove bool, question string) error {
	if autoApprove {
		return nil
	}
	if !isTerminal(s.In) {
		return errors.New("not running on a terminal: pass --auto-approve to proceed without confirmation")
	}
	fmt.Fprintf(s.Err, "%s Only 'yes' will be accepted: ", question)
	var answer string
	_, _ = fmt.Fscanln(s.In, &answer)
	if answer != "yes" {
		return errors.New("cancelled")
	}
	return nil
}

// newProgress picks the live view on a terminal, else timestamped lines.
func newProgress(s streams, noProgress bool) func([]apply.Row) apply.Progress {
	return func(rows []apply.Row) apply.Progress {
		if !noProgress && isTerminal(s.Err) && os.Getenv("TERM") != "dumb" {
			return progress.NewLive(s.Err, rows)
		}
		return progress.NewLines(s.Err, rows)
	}
}

// writeResults prints the final table: every release's outcome and time,
// then the errors in full, sensitive values masked.
func writeResults(w io.Writer, rs []run.ReleaseOutcome, p *plan.Plan) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RELEASE\tNAMESPACE\tACTION\tREVISION\tRESULT\tDURATION")
	for _, r := range rs {
		// The revision a deploy step left or found; none for the rest.
		rev, result := "-", string(r.Result)
		switch r.Result {
		case run.ResultSkipped:
			result += " (" + r.Reason + ")"
		case run.ResultUnchanged:
			if r.Reason != "" {
				rev, result = fmt.Sprint(r.Revision), result+" ("+r.Reason+")"
			}
		case run.ResultRolledBack:
			rev = fmt.Sprint(r.Revision)
		case run.ResultDeployed:
			rev, result = fmt.Sprint(r.Revision), r.Status
		case run.ResultFailed:
			result = string(r.Step)
		}
		if r.Restored {
			result += ", restored"
		} else if r.RestoreErr != nil {
			result += ", restore failed"
		}
		if r.Now != "" {
			// The stack's lock was lost: another run wrote since.
			result += "; now " + r.Now
		}
		dur := "-"
		if r.Duration > 0 {
			dur = r.Duration.Round(10 * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Namespace, r.Action, rev, result, dur)
	}
	tw.Flush()
	redact := func(err error) string {
		var de *run.DiagnosticsError
		if errors.As(err, &de) {
			var b bytes.Buffer
			if werr := writeDiagnostics(&b, de.Diags, de.Files); werr == nil {
				err = errors.New(b.String())
			}
		}
		return strings.TrimSpace(p.RedactError(err).Error())
	}
	for _, r := range rs {
		if r.Err != nil {
			fmt.Fprintf(w, "\n%s (%s/%s): %s\n", r.Addr, r.Namespace, r.Name, redact(r.Err))
		}
		if r.RestoreErr != nil {
			fmt.Fprintf(w, "\n%s: restoring failed: %s\n", r.Addr, redact(r.RestoreErr))
		}
	}
}
