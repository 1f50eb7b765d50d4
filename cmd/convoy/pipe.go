package main

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"
)

// pipeWriter is a standard stream whose reader may go away (`convoy apply
// | head`, or Ctrl-C ending the pipeline's reader first). A write that
// finds the pipe broken stops the output: the rest is dropped, and the run
// goes on, finishing or cancelling cleanly as on Ctrl-C, never dying
// mid-apply with the stack lock held. main ignores SIGPIPE, so the write
// fails with EPIPE instead of killing the process.
type pipeWriter struct {
	w      io.Writer
	broken atomic.Bool
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	if p.broken.Load() {
		return len(b), nil
	}
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.broken.Store(true)
		return len(b), nil
	}
	return n, err
}

// fileOf is the file behind a stream, if any (for terminal checks).
func fileOf(x any) (*os.File, bool) {
	switch f := x.(type) {
	case *os.File:
		return f, true
	case *pipeWriter:
		return fileOf(f.w)
	}
	return nil, false
}
