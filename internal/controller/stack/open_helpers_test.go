package stack_test

import (
	"context"

	"github.com/convoy-sh/convoy/internal/run"
)

// The tests' one-shot operations: the stack opened, one operation run on
// it and the session closed, as a command does.

func runInit(ctx context.Context, o run.Options, req run.InitRequest) (*run.Initialized, error) {
	s, err := run.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Init(ctx, req)
}

func runApply(ctx context.Context, o run.Options, req run.ApplyRequest) (*run.Applied, error) {
	s, err := run.OpenSaved(ctx, o, req.Saved)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Apply(ctx, req)
}

func runLoad(ctx context.Context, src run.Source) (*run.Loaded, error) {
	s, err := run.Open(ctx, run.Options{Source: src})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Loaded(false)
}
