// Command convoy plans and applies whole Kubernetes environments made of
// Helm-format releases described in HCL.
package main

import (
	"context"
	"fmt"
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
	out, errw := &pipeWriter{w: os.Stdout}, &pipeWriter{w: os.Stderr}
	code := execute(ctx, os.Args[1:], streams{In: os.Stdin, Out: out, Err: errw})
	stop()
	if out.Broken() {
		fmt.Fprintln(errw, "convoy: standard output was closed (broken pipe): the rest of the output was dropped; the run went on.")
	}
	os.Exit(code)
}
