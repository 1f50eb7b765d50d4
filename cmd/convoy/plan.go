package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type planOptions struct {
	stackRun
	Out              string
	DetailedExitCode bool
	JSON             bool
	Markdown         bool
	Destroy          bool
	Selection        selectionFlags
	View             planViewFlags
	Refresh          string
	Stats            bool
	AllowPolicies    []string
	Attribute        bool
	SkipNoOp         bool
	// SARIF is a file to write the plan's findings to (SARIF 2.1.0).
	SARIF string
}

func newPlanCmd(s streams) *cobra.Command {
	var o planOptions
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show what apply would change, against the stored revisions and the live cluster",
		Long: `Plan renders every release of the stack (with live lookups) and compares it
with its last deployed revision and, through server-side-apply dry runs, with
the live cluster: releases to install, upgrade or uninstall, field-level
changes per object, and drift (objects changed outside convoy). It changes
nothing. --out saves the plan for convoy apply, which refuses it once
anything it observed has changed.

With --destroy it plans what convoy destroy would do: the uninstall of every
release (or of those --target and -l select), dependents first; a destroy
plan saved with --out is applied with convoy apply PLAN_FILE, as terraform
plan -destroy.

With --detailed-exitcode the exit code is 0 when nothing would change, 1 on
error and 2 when there are changes. A plan that would change a release
another stack owns is shown, then exits 1: apply refuses it. So is a plan
that a policy denies (policy blocks, --policy; docs/policies.md), unless
--allow-policy overrides that policy: the override is recorded in the saved
plan and in the history of the releases it deploys. Warnings change no exit
code.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context(), s) },
	}
	addStackRunFlags(cmd.Flags(), &o.stackRun)
	fs := cmd.Flags()
	fs.StringVar(&o.Out, "out", "", "save the plan to this file (mode 0600) for convoy apply")
	fs.BoolVar(&o.DetailedExitCode, "detailed-exitcode", false, "exit 0 when there are no changes, 1 on error, 2 when there are changes")
	fs.BoolVar(&o.JSON, "json", false, "print the plan as JSON (docs/plan-json.md)")
	fs.BoolVar(&o.Markdown, "markdown", false, "print a summary for a pull-request comment")
	fs.BoolVar(&o.Destroy, "destroy", false, "plan the uninstall of the releases, as convoy destroy would (as terraform plan -destroy)")
	addSelectionFlags(fs, &o.Selection, "plan")
	addIncludeDependentsFlag(fs, &o.Selection)
	fs.IntVarP(&o.Parallelism, "parallelism", "p", run.DefaultPlanParallelism, "how many renders, record reads and dry runs run at once")
	addPlanViewFlags(fs, &o.View)
	addRefreshFlag(fs, &o.Refresh)
	addSkipNoOpFlag(fs, &o.SkipNoOp)
	fs.BoolVar(&o.Stats, "stats", false, "print what the plan cost on stderr: API requests and bytes, renders, dry runs, lists, records listed and read, releases found unchanged by fingerprint, requests by verb and resource")
	addForceConflictsFlag(fs)
	addAllowPolicyFlag(fs, &o.AllowPolicies)
	addKubeVersionFlag(fs, &o.KubeVersion)
	fs.StringVar(&o.SARIF, "sarif", "", "also write the plan's findings (policy denials and warnings, data loss, stale config, removed and deprecated APIs, refused releases) to this file as SARIF 2.1.0, each at its stack file and line")
	fs.BoolVar(&o.Attribute, "attribute", true, "name the inputs that changed each changed field (values leaves, chart, drift) by rendering each upgraded release again with each changed input reverted; --attribute=false skips those renders")
	_ = cmd.RegisterFlagCompletionFunc("target", completeReleases(&o.Stack, false))
	return cmd
}

// addSkipNoOpFlag registers --skip-no-op-upgrades for the commands that
// compute a plan.
func addSkipNoOpFlag(fs *pflag.FlagSet, skip *bool) {
	fs.BoolVar(skip, "skip-no-op-upgrades", false, "leave alone a release whose only change is values that render the objects and hooks of its deployed revision (a value set to the chart's default): no revision, no hooks run; its record keeps the old values")
}

// addAllowPolicyFlag registers --allow-policy: the explicit, recorded
// override of a policy's denials.
func addAllowPolicyFlag(fs *pflag.FlagSet, names *[]string) {
	fs.StringArrayVar(names, "allow-policy", nil, "turn this policy's denials into warnings for this plan (repeatable); recorded in the saved plan and in the release history")
}

func (o planOptions) Run(ctx context.Context, s streams) (err error) {
	if o.JSON && o.Markdown {
		return errors.New("--json and --markdown exclude each other")
	}
	if o.Parallelism < 1 {
		return errors.New("--parallelism must be at least 1")
	}
	if o.Selection.IncludeDependents && !o.Destroy {
		return errors.New("--include-dependents is for --destroy: the releases that depend on what a destroy removes")
	}
	req := o.Selection.request()
	if req.Refresh, err = run.ParseRefresh(o.Refresh); err != nil {
		return err
	}
	opts, err := o.options(s)
	if err != nil {
		return err
	}
	var traffic run.Traffic
	if o.Stats {
		req.Stats = &run.Stats{}
		opts.Clusters.Traffic = &traffic
	}
	req.Destroy = o.Destroy
	req.AllowPolicies = o.AllowPolicies
	req.SkipNoOpUpgrades = o.SkipNoOp
	if !o.Attribute {
		req.Attribution = run.AttributeNone
	}
	if o.Out == "" {
		// Not saved, so never verified: releases proven unchanged are
		// read from metadata alone.
		req.Observe = run.ObserveMetadata
	}
	session, err := run.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer session.Close()
	res, err := session.Plan(ctx, req)
	var foreign *plan.ForeignError
	if err != nil && !errors.As(err, &foreign) {
		return err
	}
	if o.Stats {
		fmt.Fprintf(s.Err, "stats: requests=%d (get=%d list=%d patch=%d other=%d) bytes=%d rate-limit-wait=%s rate-limited=%d %s by kind: %s\n",
			traffic.Requests.Load(), traffic.Get.Load(), traffic.List.Load(), traffic.Patch.Load(), traffic.Other.Load(), traffic.Bytes.Load(),
			time.Duration(traffic.RateLimits.Wait.Load()).Round(time.Millisecond), traffic.RateLimits.Delayed.Load(), req.Stats, traffic.ByKind())
	}
	p := res.Plan
	switch {
	case o.JSON:
		err = view.JSON(s.Out, p)
	case o.Markdown:
		err = view.Markdown(s.Out, p)
	default:
		err = o.View.text(s.Out, p)
	}
	if err != nil {
		return err
	}
	if o.SARIF != "" {
		if err := writePlanSARIF(o.SARIF, res); err != nil {
			return err
		}
	}
	if o.Out != "" {
		if err := run.SavePlan(o.Out, res); err != nil {
			return err
		}
		note := ""
		if p.HasSensitive() || len(o.Stack.Vars)+len(o.Stack.VarFiles) > 0 {
			note = " It holds the variable values and sensitive values unmasked (apply needs them): keep it as secret as they are."
		}
		fmt.Fprintf(s.Err, "Saved the plan to %s (mode 0600).%s Apply it with: %s\n", o.Out, note, o.applyCommand())
	}
	if foreign != nil {
		return foreign
	}
	// A denied plan exits 1 once it is printed (and saved: apply refuses
	// it too).
	if err := p.PolicyDenied(); err != nil {
		return err
	}
	if o.DetailedExitCode && p.HasChanges() {
		return &exitError{code: 2}
	}
	return nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// applyCommand is the command that applies the saved plan, from the
// working directory: the plan file carries the stack directory and the
// variables; the flags choosing the default cluster and its records are
// repeated, absolute.
func (o planOptions) applyCommand() string {
	args := []string{"convoy", "apply"}
	c := o.Cluster
	if c.Kubeconfig != "" {
		kc := c.Kubeconfig
		if abs, err := filepath.Abs(kc); err == nil {
			kc = abs
		}
		args = append(args, "--kubeconfig", shellQuote(kc))
	}
	if c.Context != "" {
		args = append(args, "--kube-context", shellQuote(c.Context))
	}
	if c.StorageDriver != "" && c.StorageDriver != "secret" {
		args = append(args, "--storage-driver", shellQuote(c.StorageDriver))
	}
	return strings.Join(append(args, shellQuote(o.Out)), " ")
}

// addRefreshFlag registers --refresh for the commands that compute a plan.
func addRefreshFlag(fs *pflag.FlagSet, refresh *string) {
	fs.StringVar(refresh, "refresh", "incremental", "incremental: render and dry-run only the releases whose inputs or live objects changed since their deployed revision (docs/performance.md); full: every release")
}
