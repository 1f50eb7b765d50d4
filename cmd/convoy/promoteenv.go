package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/spf13/pflag"
)

// promoteEnvOptions are the flags of `convoy promote --from-env X --to-env
// Y`: a promotion between two environments of a stack, without a
// controller.
type promoteEnvOptions struct {
	stackRun
	From, To         string
	AllowMissing     bool
	Out              string
	DetailedExitCode bool
	JSON             bool
	AutoApprove      bool
	NoProgress       bool
	View             planViewFlags
	Refresh          string
	AllowPolicies    []string
}

const promoteEnvLong = `With --from-env and --to-env, promote plans the target environment of the
stack (-C) with exactly the charts the source environment has deployed:
each release's chart is read from the source environment's deployed
release record (its name, version, templates, default values and files as
recorded; no repository or lock file is read for it), so a chart published
since cannot slip in. The values are the target environment's own: the
stack evaluated for --to-env (its vars, var_files and names), as convoy
plan --env would. The source records are read through the source
environment's cluster blocks.

A release the source environment has not deployed (not declared there, no
record, or a newest record that is failed or pending) refuses the
promotion, named with its status; --allow-missing leaves it out of the
plan instead. The plan uninstalls nothing.

The plan is approved like any other: without --out or --auto-approve it
is printed and nothing changes (--detailed-exitcode: 2 when it has
changes); --out saves it for convoy apply PLAN_FILE, which refuses it once
anything it observed changed; --auto-approve applies it at once. The
records it writes say "Promoted from SOURCE revision N" (helm history).
(docs/stack-variables.md, "Promoting between environments".)`

// addPromoteEnvFlags registers the flags of a promotion between
// environments on fs.
func addPromoteEnvFlags(fs *pflag.FlagSet, o *promoteEnvOptions) {
	addStackRunFlags(fs, &o.stackRun)
	fs.StringVar(&o.From, "from-env", "", "the environment whose deployed charts are promoted")
	fs.StringVar(&o.To, "to-env", "", "the environment the plan is for")
	fs.BoolVar(&o.AllowMissing, "allow-missing", false, "leave out, named, the releases the source environment has not deployed, instead of refusing")
	fs.StringVar(&o.Out, "out", "", "save the plan to this file (mode 0600) for convoy apply")
	fs.BoolVar(&o.DetailedExitCode, "detailed-exitcode", false, "exit 0 when there are no changes, 1 on error, 2 when there are changes (without --auto-approve)")
	fs.BoolVar(&o.JSON, "json", false, "print the plan as JSON (docs/plan-json.md)")
	fs.BoolVar(&o.AutoApprove, "auto-approve", false, "apply the plan at once, as convoy apply --auto-approve")
	addRunFlags(fs, &o.Parallelism, &o.NoProgress)
	addPlanViewFlags(fs, &o.View)
	addRefreshFlag(fs, &o.Refresh)
	addAllowPolicyFlag(fs, &o.AllowPolicies)
}

// Run promotes: it plans, then prints, saves or applies the plan as the
// flags say.
func (o promoteEnvOptions) Run(ctx context.Context, s streams) error {
	if o.From == "" || o.To == "" {
		return errors.New("promote needs --from-env and --to-env: the environment whose deployed charts are promoted, and the one the plan is for")
	}
	if o.Parallelism < 1 {
		return errors.New("--parallelism must be at least 1")
	}
	if o.JSON && o.AutoApprove {
		return errors.New("--json prints a plan; --auto-approve applies it: save it with --out and apply it with convoy apply")
	}
	var req run.PromoteRequest
	req.From, req.To, req.AllowMissing = o.From, o.To, o.AllowMissing
	var err error
	if req.Plan.Refresh, err = run.ParseRefresh(o.Refresh); err != nil {
		return err
	}
	req.Plan.AllowPolicies = o.AllowPolicies
	if o.Out == "" && !o.AutoApprove {
		// Neither saved nor applied, so never verified.
		req.Plan.Observe = run.ObserveMetadata
	}
	opts, err := o.writerOptions(s)
	if err != nil {
		return err
	}
	// The stack is the target environment's (--to-env); CONVOY_ENV does
	// not choose.
	opts.Source.Environment = o.To
	session, err := run.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer session.Close()
	res, err := session.Promote(ctx, req)
	if err != nil {
		return err
	}
	p := res.Plan
	for _, m := range res.Missing {
		fmt.Fprintf(s.Err, "Left out (--allow-missing): %s\n", m)
	}
	if o.JSON {
		err = view.JSON(s.Out, p)
	} else {
		err = o.View.text(s.Out, p)
	}
	if err != nil {
		return err
	}
	if err := p.Foreign(); err != nil {
		return err
	}
	if err := p.PolicyDenied(); err != nil {
		return err
	}
	var b []byte
	if o.Out != "" || o.AutoApprove {
		if b, err = run.EncodePlan(res.Planned); err != nil {
			return err
		}
	}
	if o.Out != "" {
		if err := run.WritePlanFile(o.Out, b); err != nil {
			return err
		}
		po := planOptions{stackRun: o.stackRun, Out: o.Out}
		fmt.Fprintf(s.Err, "Saved the plan to %s (mode 0600). It may hold sensitive values unmasked (apply needs them): keep it as secret as they are. Apply it with: %s\n", o.Out, po.applyCommand())
	}
	if !o.AutoApprove {
		if o.DetailedExitCode && p.HasChanges() {
			return &exitError{code: 2}
		}
		return nil
	}
	if !p.HasChanges() {
		return nil
	}
	// Applied as a saved plan is: under the stack's lock, once everything
	// it observed is verified unchanged.
	saved, err := run.DecodePlan(b, "the promotion's plan")
	if err != nil {
		return err
	}
	res2, err := session.Apply(ctx, run.ApplyRequest{
		Saved:    saved,
		Plan:     run.PlanRequest{AllowPolicies: o.AllowPolicies},
		Command:  "convoy promote",
		Progress: newProgress(s, o.NoProgress),
	})
	return finish(s, res2, err)
}
