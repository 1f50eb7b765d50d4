//go:build !windows

package stacklock

import (
	"errors"
	"syscall"
)

// processExists reports whether a process with this pid exists on this
// host (one owned by another user exists too).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
