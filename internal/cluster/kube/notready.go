package kube

import (
	"fmt"
	"strings"
)

// State is why an object did not reach the state waited for.
type State int

const (
	// StateNotReady: the object exists but is still progressing.
	StateNotReady State = iota + 1
	// StateFailed: the object reached a terminal failure (a failed Job, a
	// Pod that cannot be scheduled); waiting longer would not help.
	StateFailed
	// StateNotFound: the object waited for does not exist.
	StateNotFound
	// StateNotDeleted: the object waited to disappear still exists.
	StateNotDeleted
)

func (s State) String() string {
	switch s {
	case StateNotReady:
		return "not ready"
	case StateFailed:
		return "failed"
	case StateNotFound:
		return "not found"
	case StateNotDeleted:
		return "still exists"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ObjectStatus is one object that did not become ready (or gone).
type ObjectStatus struct {
	Ref   Ref
	State State
	// Message summarises the object's own status: "0/2 replicas available",
	// "BackoffLimitExceeded: Job has reached the specified backoff limit".
	Message string
	// Details are the reasons found below the object, most useful first:
	// its failing pods ("pod web-7d9c-abcde: container web: not ready
	// (ContainersNotReady)") and recent Warning events.
	Details []string
}

// String is the object's line in a NotReadyError.
func (s ObjectStatus) String() string {
	var b strings.Builder
	b.WriteString(s.Ref.String())
	b.WriteString(": ")
	b.WriteString(s.State.String())
	if s.Message != "" {
		b.WriteString(": ")
		b.WriteString(s.Message)
	}
	for _, d := range s.Details {
		b.WriteString("; ")
		b.WriteString(d)
	}
	return b.String()
}

// NotReadyError is returned by Wait, WaitForDelete and InstallCRDs when
// objects did not get where they were waited for. Error() has one line per
// object, ready to go into a release description.
type NotReadyError struct {
	Objects []ObjectStatus
	// Cause is why waiting stopped: the ctx error on timeout or cancellation,
	// nil when an object failed.
	Cause error
}

func (e *NotReadyError) Error() string {
	lines := make([]string, len(e.Objects))
	for i, o := range e.Objects {
		lines[i] = o.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.Is(err, context.DeadlineExceeded) tell a timeout from a
// failure.
func (e *NotReadyError) Unwrap() error { return e.Cause }
