package main

import (
	"context"

	"github.com/convoy-sh/convoy/internal/run"
)

// loadOrdered is the stack of src loaded and ordered, as commands open it.
func loadOrdered(ctx context.Context, src run.Source) (*run.Loaded, error) {
	s, err := run.Open(ctx, run.Options{Source: src})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Loaded(true)
}
