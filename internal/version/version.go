// Package version reports what build of convoy is running.
package version

import (
	"cmp"
	"runtime"
	"runtime/debug"
	"sync"
)

// Set at link time by the Makefile (-X). They are written once by the linker
// and never changed at run time.
var (
	version = "dev"
	commit  = ""
)

// Info describes the running build.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the build information, falling back to the VCS data the Go
// toolchain embeds when the linker did not set a commit.
func Get() Info { return info() }

// info is computed once: the plan asks for it per release (it is part of
// each fingerprint), and parsing the build information each time cost a
// tenth of a no-change plan's CPU at 2,000 releases. It is a constant of
// the binary.
var info = sync.OnceValue(func() Info {
	c := commit
	if c == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					c = s.Value
				}
			}
		}
	}
	return Info{
		Version:   version,
		Commit:    cmp.Or(c, "unknown"),
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
})
