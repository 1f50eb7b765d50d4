package release

import (
	"context"
	"errors"
)

// ErrNotHeld is what a fence's error wraps when the operation lost what
// entitled it to write (a run's stack lock taken over or removed): it is
// final, never retried.
var ErrNotHeld = errors.New("no longer entitled to write")

// Fence says whether an operation may still change the cluster: nil while
// it holds what entitles it to (the stack lock of its run), else why not.
// An error wrapping ErrNotHeld is final; any other (the lock could not be
// confirmed) may pass.
type Fence func(ctx context.Context) error

type fenceKey struct{}

// WithFence is ctx with a fence that the engine consults before each
// record write and before each change of the release's objects (hooks,
// apply, deletions), also in the writes that outlive ctx (context.WithoutCancel
// keeps it). The fence travels with the run's context because every
// operation of the run, and the rollbacks and uninstalls they start, must
// stop at once when it fails.
func WithFence(ctx context.Context, f Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

// checkFence is nil when ctx has no fence or its fence lets the
// operation write.
func checkFence(ctx context.Context) error {
	f, _ := ctx.Value(fenceKey{}).(Fence)
	if f == nil {
		return nil
	}
	return f(ctx)
}
