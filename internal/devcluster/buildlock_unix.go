//go:build unix

package devcluster

import (
	"os"
	"syscall"
)

// waitForBuild blocks while hack/build-tools.sh holds the exclusive lock
// at path, that is while it builds the tool (or waits to): a shared lock is
// granted once the build is over. Without the file no build was ever
// started, and there is nothing to wait for.
func waitForBuild(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
