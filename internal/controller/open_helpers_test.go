package controller_test

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
