package devcluster_test

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
)

// pinned reads a version from hack/tools.env, as the locators do.
func pinned(t *testing.T, key string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "hack", "tools.env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && k == key {
			return v
		}
	}
	t.Fatalf("hack/tools.env pins no %s", key)
	return ""
}

func toolsEnv(dir string) func(string) string {
	return func(k string) string {
		if k == "CONVOY_TOOLS_DIR" {
			return dir
		}
		return ""
	}
}

func writeExecutable(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// blockedOn reports whether some process waits for a lock on the file
// with inode ino (a "->" line of /proc/locks).
func blockedOn(t *testing.T, ino uint64) bool {
	t.Helper()
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	suffix := ":" + strconv.FormatUint(ino, 10)
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, "->") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if strings.HasSuffix(f, suffix) && strings.Count(f, ":") == 2 {
				return true
			}
		}
	}
	return false
}

// While hack/build-tools.sh builds an oracle (hack/test.sh builds helm 3,
// helmfile and Prometheus while the tests run), a test that needs it waits
// for the build instead of failing, and then finds what it built.
func TestLocateWaitsForTheBuild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("watches /proc/locks")
	}
	dir := t.TempDir()
	lockPath := filepath.Join(dir, ".build-helmfile.lock")
	builder, err := os.OpenFile(lockPath, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer builder.Close()
	if err := syscall.Flock(int(builder.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(builder.Fd()), &st); err != nil {
		t.Fatal(err)
	}

	type result struct {
		path string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		p, err := devcluster.LocateHelmfile(toolsEnv(dir))
		done <- result{p, err}
	}()

	devtest.Eventually(t, 30*time.Second, func() bool {
		if blockedOn(t, st.Ino) {
			return true
		}
		select {
		case r := <-done:
			t.Fatalf("located without waiting for the build: %q, %v", r.path, r.err)
		default:
		}
		return false
	}, func() string { return "the locator never waited for the build's lock" })

	// The build ends: its binary in place, then its lock released.
	want := filepath.Join(dir, "helmfile-"+pinned(t, "HELMFILE_VERSION"), "bin", "helmfile")
	writeExecutable(t, want)
	if err := builder.Close(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.path != want {
		t.Fatalf("LocateHelmfile = %q, %v; want %q", r.path, r.err, want)
	}
}

// Without a build under way, a missing oracle is an error at once that
// says where it was looked for and how to build it.
func TestLocateMissingNamesTheBuild(t *testing.T) {
	dir := t.TempDir()
	_, err := devcluster.LocateHelm3(toolsEnv(dir))
	if err == nil {
		t.Fatal("LocateHelm3 found a helm 3 in an empty tools cache")
	}
	want := filepath.Join(dir, "helm3-"+pinned(t, "HELM3_VERSION"), "bin", "helm")
	for _, s := range []string{want, "hack/build-tools.sh helm3"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %q", err, s)
		}
	}
}

// Prometheus may come from a package manager (Debian's prometheus, which
// hack/build-tools.sh installs where apt-get can): a source build in the
// tools cache first, else the one on PATH.
func TestLocatePrometheusFromPath(t *testing.T) {
	dir := t.TempDir()
	pathDir := t.TempDir()
	onPath := filepath.Join(pathDir, "prometheus")
	writeExecutable(t, onPath)
	t.Setenv("PATH", pathDir)

	got, err := devcluster.LocatePrometheus(toolsEnv(dir))
	if err != nil || got != onPath {
		t.Fatalf("LocatePrometheus = %q, %v; want the one on PATH, %q", got, err, onPath)
	}

	built := filepath.Join(dir, "prometheus-"+pinned(t, "PROMETHEUS_VERSION"), "bin", "prometheus")
	writeExecutable(t, built)
	if got, err := devcluster.LocatePrometheus(toolsEnv(dir)); err != nil || got != built {
		t.Fatalf("LocatePrometheus = %q, %v; want the source build, %q", got, err, built)
	}

	// Helm is never taken from PATH: the oracle is the pinned version.
	writeExecutable(t, filepath.Join(pathDir, "helm"))
	if got, err := devcluster.LocateHelm(toolsEnv(dir)); err == nil {
		t.Fatalf("LocateHelm = %q from PATH; want the pinned build or an error", got)
	}
}

// The registry may be Debian's docker-registry (hack/build-tools.sh
// registry unpacks the package into the tools cache where apt-get can
// download it): a source build at the pinned version first, else the
// unpacked package, else a docker-registry installed on PATH.
func TestLocateRegistryFromDebian(t *testing.T) {
	dir := t.TempDir()
	pathDir := t.TempDir()
	t.Setenv("PATH", pathDir)
	writeExecutable(t, filepath.Join(pathDir, "registry")) // not the package's name

	if got, err := devcluster.LocateRegistry(toolsEnv(dir)); err == nil {
		t.Fatalf("LocateRegistry = %q with neither a build nor docker-registry", got)
	} else if !strings.Contains(err.Error(), "docker-registry on PATH") {
		t.Errorf("error %q does not say docker-registry was looked for on PATH", err)
	}

	installed := filepath.Join(pathDir, "docker-registry")
	writeExecutable(t, installed)
	if got, err := devcluster.LocateRegistry(toolsEnv(dir)); err != nil || got != installed {
		t.Fatalf("LocateRegistry = %q, %v; want the installed package's, %q", got, err, installed)
	}

	unpacked := filepath.Join(dir, "registry-debian", "bin", "registry")
	writeExecutable(t, unpacked)
	if got, err := devcluster.LocateRegistry(toolsEnv(dir)); err != nil || got != unpacked {
		t.Fatalf("LocateRegistry = %q, %v; want the unpacked package's, %q", got, err, unpacked)
	}

	built := filepath.Join(dir, "registry-"+pinned(t, "REGISTRY_VERSION"), "bin", "registry")
	writeExecutable(t, built)
	if got, err := devcluster.LocateRegistry(toolsEnv(dir)); err != nil || got != built {
		t.Fatalf("LocateRegistry = %q, %v; want the source build, %q", got, err, built)
	}
}
