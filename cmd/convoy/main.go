// Command convoy plans and applies whole Kubernetes environments made of
// Helm-format releases described in HCL.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// A closed pipe must not kill a run holding the stack lock: with
	// SIGPIPE notified (not ignored, which children would inherit), writes
	// to it fail with EPIPE instead, and pipeWriter stops the output.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	code := executeOn(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// executeOn runs the command line on the process's streams. A reader of
// the output that goes away (`convoy output | head`) only ends the output:
// the run goes on, and nothing is said about it, as other tools do.
func executeOn(ctx context.Context, args []string, in io.Reader, out, errw io.Writer) int {
	return execute(ctx, args, streams{In: in, Out: &pipeWriter{w: out}, Err: &pipeWriter{w: errw}})
}
