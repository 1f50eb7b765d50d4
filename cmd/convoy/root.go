package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"

	"github.com/convoy-sh/convoy/internal/diagtext"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/spf13/cobra"
)

// streams are the process's standard streams, injected so commands can be
// run in-process by tests.
type streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// exitError carries a specific exit code (e.g. `fmt --check` exits 3, `plan
// --detailed-exitcode` exits 2). A nil err means the command already said
// everything it had to say.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// errSilent marks an error whose details the command has already printed
// (for example rendered HCL diagnostics); run only sets the exit code.
var errSilent = &exitError{code: 1}

// stopProfile ends the CPU profile and the execution trace --cpuprofile
// and --trace started (nil: none);
// heapProfile is where --memprofile writes the heap profile at the end.
var (
	stopProfile func()
	heapProfile string
)

// execute runs the convoy command line and returns the process exit code.
func execute(ctx context.Context, args []string, s streams) int {
	root := newRootCmd(s)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if stopProfile != nil {
		stopProfile()
		stopProfile = nil
	}
	if heapProfile != "" {
		if f, err := os.Create(heapProfile); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
	}
	if err == nil {
		return 0
	}
	var de *run.DiagnosticsError
	if errors.As(err, &de) {
		if werr := diagtext.Write(s.Err, de.Diags, de.Files, useColor(s.Err) && !noColor(cmd)); werr != nil {
			fmt.Fprintf(s.Err, "Error: %v\n", de)
		}
		return 1
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(s.Err, "Error: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(s.Err, "Error: %v\n", err)
	return 1
}

// noColor reports whether cmd was given --no-color: the diagnostics of a
// failed command are printed without colours then, as its output is.
func noColor(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	f := cmd.Flags().Lookup("no-color")
	return f != nil && f.Value.String() == "true"
}

func newRootCmd(s streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "convoy",
		Short: "Plan and apply whole Kubernetes environments of Helm-format releases",
		Long: `convoy describes an environment — many Helm-format releases and their
dependencies — in HCL, renders every chart natively, shows a plan against the
stored release revisions and the live cluster, and applies the releases in
dependency order with Helm's hooks, waits, atomic rollback and history.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	var cpuProfile string
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of the command to this file (for go tool pprof)")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentFlags().StringVar(&heapProfile, "memprofile", "", "write a Go heap profile at the end of the command to this file")
	_ = root.PersistentFlags().MarkHidden("memprofile")
	var traceFile string
	root.PersistentFlags().StringVar(&traceFile, "trace", "", "write a Go execution trace of the command to this file (for go tool trace)")
	_ = root.PersistentFlags().MarkHidden("trace")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		var stops []func()
		stopProfile = func() {
			for _, stop := range stops {
				stop()
			}
		}
		// record starts writing to path (if set) with start, stopped at
		// the command's end.
		record := func(path string, start func(io.Writer) error, stop func()) error {
			if path == "" {
				return nil
			}
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			if err := start(f); err != nil {
				f.Close()
				return err
			}
			stops = append(stops, func() { stop(); f.Close() })
			return nil
		}
		if err := record(cpuProfile, pprof.StartCPUProfile, pprof.StopCPUProfile); err != nil {
			return err
		}
		if err := record(traceFile, trace.Start, trace.Stop); err != nil {
			return err
		}
		return nil
	}
	root.AddCommand(
		newVersionCmd(s),
		newValidateCmd(s),
		newInitCmd(s),
		newOutdatedCmd(s),
		newCacheCmd(s),
		newGraphCmd(s),
		newFmtCmd(s),
		newImportCmd(s),
		newApplyCmd(s),
		newDestroyCmd(s),
		newStatusCmd(s),
		newHistoryCmd(s),
		newRollbackCmd(s),
		newRecoverCmd(s),
		newRecordsCmd(s),
		newForceUnlockCmd(s),
		newRenderCmd(s),
		newPlanCmd(s),
		newShowCmd(s),
		newClusterCmd(s),
		newStackSetCmd(s),
		newExplainCmd(s),
		newOutputCmd(s),
		newTestCmd(s),
		newPushCmd(s),
		newVerifyCmd(s),
		newControllerCmd(s),
		newApproveCmd(s),
		newPromoteCmd(s),
		newGetCmd(s),
		newUICmd(s),
	)
	registerEnvCompletion(root)
	return root
}
