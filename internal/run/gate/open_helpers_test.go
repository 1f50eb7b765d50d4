package gate_test

import (
	"context"

	"github.com/convoy-sh/convoy/internal/run"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The tests' one-shot operations: the stack opened, one operation run on
// it and the session closed, as a command does.

func runApply(ctx context.Context, o run.Options, req run.ApplyRequest) (*run.Applied, error) {
	s, err := run.OpenSaved(ctx, o, req.Saved)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Apply(ctx, req)
}

func runObjects(ctx context.Context, o run.Options) ([]*unstructured.Unstructured, error) {
	s, err := run.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Objects(ctx)
}
