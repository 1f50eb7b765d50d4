package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
)

// A plan that found a release pending under a live holder's lock names
// that holder, as the lock recorded it when the plan began, even when the
// lock is gone by the time the plan ends (it expired, or its run ended
// meanwhile: issue 54, item 2); it then reads no lock at all (no
// clusters here). A run the plan did not know of is looked up now.
func TestNameRunningKeepsTheHoldersThePlanJudgedBy(t *testing.T) {
	since := time.Date(2026, 12, 2, 3, 4, 5, 0, time.UTC)
	held := &stacklock.HeldError{Stack: "shop", Holder: "ci@build-7 pid 4242", Command: "convoy controller (Stack ops/shop)", LockID: "a1b2c3d4e5f6", Since: since}
	pe := &release.PendingError{Name: "web", Namespace: "shop", Status: release.StatusPendingUpgrade, Revision: 3, RunID: "a1b2c3d4e5f6"}
	other := &release.PendingError{Name: "db", Namespace: "shop", Status: release.StatusPendingInstall, Revision: 1, RunID: "ffffffffffff"}
	err := errors.Join(fmt.Errorf("release.web: %w", pe), other)

	nameRunning(context.Background(), nil, "shop", lockHolders{held.LockID: held}, err)

	var le *stacklock.HeldError
	if !errors.As(pe.Held, &le) || le != held {
		t.Fatalf("the pending record's holder is %v, want the one the plan began with", pe.Held)
	}
	if !strings.Contains(pe.Error(), "convoy controller (Stack ops/shop) (run a1b2c3d4e5f6, ci@build-7 pid 4242) has held stack \"shop\" since 2026-12-02T03:04:05Z") ||
		strings.Contains(pe.Error(), "convoy recover") {
		t.Errorf("the error does not name the holder: %s", pe)
	}
	if other.Held != nil || other.Running != "" {
		t.Errorf("a run no lock names was named: %+v", other)
	}
}
