package run_test

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

func runPlan(ctx context.Context, o run.Options, req run.PlanRequest) (*run.Planned, error) {
	s, err := run.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Plan(ctx, req)
}

func runVerify(ctx context.Context, o run.Options, saved *run.SavedPlan) error {
	s, err := run.OpenSaved(ctx, o, saved)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Verify(ctx, saved)
}

func runObjects(ctx context.Context, o run.Options) ([]*unstructured.Unstructured, error) {
	s, err := run.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Objects(ctx)
}

func runInit(ctx context.Context, o run.Options, req run.InitRequest) (*run.Initialized, error) {
	s, err := run.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Init(ctx, req)
}

func runValidate(ctx context.Context, o run.Options) (*run.Loaded, error) {
	s, err := run.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Validate(ctx)
}
