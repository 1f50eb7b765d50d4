package stack

import (
	"sync"
	"time"
)

// inflight tracks the applies and destroys under way, so that a
// controller that stops (its leadership lost, a signal) lets them end
// cleanly before it exits: the manager cancels their context and, on a
// lost leadership, returns at once; each run then stops writing, records
// what it can as failed while it still holds its stack lock, and releases
// the lock within its grace period. Without waiting, the process exited
// mid-apply and left pending records and the lock behind until a restart
// healed them.
type inflight struct {
	mu     sync.Mutex
	n      int
	idle   chan struct{} // closed when n drops to 0 after close
	closed bool
}

// start counts a run in; false once the controller is stopping (the run
// must not start).
func (f *inflight) start() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.n++
	return true
}

// done counts a run out.
func (f *inflight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

// drain refuses new runs and waits until the runs under way have ended,
// at most timeout. It reports how many were still running then.
func (f *inflight) drain(timeout time.Duration) int {
	f.mu.Lock()
	f.closed = true
	if f.n == 0 {
		f.mu.Unlock()
		return 0
	}
	idle := make(chan struct{})
	f.idle = idle
	f.mu.Unlock()
	select {
	case <-idle:
	case <-time.After(timeout):
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}
