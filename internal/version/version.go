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
	// date is the commit's time (RFC 3339, UTC): a release build's is
	// the same on every rebuild, never the time of the build.
	date = ""
)

// Info describes the running build.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the build information, falling back to the VCS data the Go
// toolchain embeds when the linker did not set a commit.
func Get() Info { return info() }

// info is read once: the build information does not change, and reading
// it parses the whole module list (a fingerprint of each release asks).
var info = sync.OnceValue(func() Info {
	v, c, d := version, commit, date
	if bi, ok := debug.ReadBuildInfo(); ok {
		// go install …@VERSION links no version: the module's is it.
		if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && commit == "":
				c = s.Value
			case s.Key == "vcs.time" && date == "":
				d = s.Value
			}
		}
	}
	return Info{
		Version:   v,
		Commit:    cmp.Or(c, "unknown"),
		Date:      d,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
})
