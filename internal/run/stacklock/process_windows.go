package stacklock

import "os"

// processExists reports whether a process with this pid exists on this
// host: on Windows, whether it can be opened.
func processExists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
