package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/convoy-sh/convoy/internal/run"
	"github.com/spf13/cobra"
)

type testOptions struct {
	stackRun
	Timeout   time.Duration
	Logs      bool
	Filter    []string
	Selectors []string
}

func newTestCmd(s streams) *cobra.Command {
	var o testOptions
	cmd := &cobra.Command{
		Use:   "test [RELEASE... | -l SELECTOR]",
		Short: "Run the charts' test hooks of releases (like helm test)",
		Long: `Test runs the test hooks (helm.sh/hook: test) of every release of the stack,
or of those named (an address such as release.api["eu"], or a Helm release
name) and those whose labels -l selects, as helm test does: each release's tests of its newest revision, in
weight and name order, each created and waited to completion within the
release's timeout (or --timeout), stopping at the first failure. Each test's last run is
recorded in the release record, as Helm records it. The logs of a failed
test's pods are printed; with --logs, those of every test's pods (Pods and
Jobs' pods), read as each test ends, before its delete policy removes it.
--filter chooses tests by name, as helm test --filter: name=NAME runs only
the tests named, !name=NAME leaves one out (repeatable, or comma-separated).
The exit code is 1 when a test failed. It holds the stack's lock, so it
never runs beside an apply of the stack.`,
		ValidArgsFunction: completeReleases(&o.Stack, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), s, args)
		},
	}
	addStackRunFlags(cmd.Flags(), &o.stackRun)
	addParallelismFlag(cmd.Flags(), &o.Parallelism, "how many releases are tested at once")
	addSelectorFlag(cmd.Flags(), &o.Selectors, "test")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 0, "how long each test may take (as helm test --timeout; default: the release's timeout, else 5m0s)")
	cmd.Flags().BoolVar(&o.Logs, "logs", false, "print the logs of every test's pods, not only of a failed test's (as helm test --logs)")
	addPlainProgressFlag(cmd.Flags())
	cmd.Flags().StringSliceVar(&o.Filter, "filter", nil, "run only the tests named: name=NAME, or all but one: !name=NAME (repeatable or comma-separated; as helm test --filter)")
	return cmd
}

// testFilter parses --filter terms as helm test does: name=NAME keeps a
// test, !name=NAME (or "! name=NAME") leaves it out. Other attributes are
// an error, not ignored.
func testFilter(terms []string) (only, skip []string, err error) {
	for _, f := range terms {
		neg := strings.HasPrefix(f, "!")
		attr, name, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(f, "!")), "=")
		switch {
		case !ok || attr != "name":
			return nil, nil, fmt.Errorf("--filter %q: want name=NAME or !name=NAME (tests are filtered by name only, as helm test)", f)
		case name == "":
			return nil, nil, fmt.Errorf("--filter %q: the test's name is empty", f)
		case neg:
			skip = append(skip, name)
		default:
			only = append(only, name)
		}
	}
	return only, skip, nil
}

func (o testOptions) Run(ctx context.Context, s streams, names []string) error {
	if o.Parallelism < 1 {
		return errors.New("--parallelism must be at least 1")
	}
	only, skip, err := testFilter(o.Filter)
	if err != nil {
		return err
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
	runs, err := session.Test(ctx, run.TestRequest{Releases: names, Selectors: o.Selectors, Timeout: o.Timeout, Only: only, Skip: skip, Logs: o.Logs})
	if err != nil && len(runs) == 0 {
		return err
	}
	tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RELEASE\tNAMESPACE\tTEST\tPHASE\tDURATION")
	failed := false
	for _, t := range runs {
		inst := t.Instance
		switch {
		case t.Err != nil:
			fmt.Fprintf(tw, "%s\t%s\t-\terror\t-\n", inst.Name, inst.Namespace)
		case len(t.Result.Hooks) == 0 && len(t.Result.Skipped) == 0:
			fmt.Fprintf(tw, "%s\t%s\t-\tno tests\t-\n", inst.Name, inst.Namespace)
		default:
			for _, h := range t.Result.Hooks {
				phase, dur := string(h.LastRun.Phase), "-"
				if phase == "" {
					phase = "not run"
				}
				if !h.LastRun.CompletedAt.IsZero() && !h.LastRun.StartedAt.IsZero() {
					dur = h.LastRun.CompletedAt.Sub(h.LastRun.StartedAt).Round(10 * time.Millisecond).String()
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", inst.Name, inst.Namespace, h.Name, phase, dur)
			}
			for _, h := range t.Result.Skipped {
				fmt.Fprintf(tw, "%s\t%s\t%s\tskipped (--filter)\t-\n", inst.Name, inst.Namespace, h.Name)
			}
		}
		failed = failed || t.Failed()
	}
	tw.Flush()
	for _, t := range runs {
		switch {
		case t.Err != nil:
			fmt.Fprintf(s.Out, "\n%s (%s/%s): %v\n", t.Instance.Addr, t.Instance.Namespace, t.Instance.Name, t.Err)
		case t.Result.Err != nil:
			fmt.Fprintf(s.Out, "\n%s (%s/%s): %v\n", t.Instance.Addr, t.Instance.Namespace, t.Instance.Name, t.Result.Err)
		}
		if t.Result != nil {
			for _, l := range t.Result.Logs {
				fmt.Fprintf(s.Out, "\nLogs of pod %s", l.Pod)
				if l.Container != "" {
					fmt.Fprintf(s.Out, ", container %s", l.Container)
				}
				if l.Err != nil {
					fmt.Fprintf(s.Out, ": unavailable: %v\n", l.Err)
					continue
				}
				fmt.Fprintln(s.Out, ":")
				if strings.TrimSpace(l.Log) == "" {
					fmt.Fprintln(s.Out, "  (empty)")
					continue
				}
				for _, line := range strings.Split(strings.TrimRight(l.Log, "\n"), "\n") {
					fmt.Fprintf(s.Out, "  %s\n", line)
				}
			}
		}
	}
	if err != nil {
		return err
	}
	if failed {
		return errSilent
	}
	return nil
}
