package source_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart/source"
)

func TestReadLockDiagnostics(t *testing.T) {
	digest := `"sha256:` + strings.Repeat("ab", 32) + `"`
	for _, tc := range []struct{ name, text, want string }{
		{"syntax", "release \"web\" {\n  chart = \n", "convoy.lock.hcl:2,11"},
		{"missing attribute", "release \"web\" {\n  chart = \"c/web\"\n  version = \"1.0.0\"\n}\n", `The argument "source" is required`},
		{"bad digest", "release \"web\" {\n  chart = \"c/web\"\n  source = \"https://x\"\n  version = \"1.0.0\"\n  digest = \"md5:abc\"\n}\n", `release "web": digest "md5:abc" is not sha256`},
		{"duplicate", "release \"web\" {\n  chart = \"c/web\"\n  source = \"https://x\"\n  version = \"1.0.0\"\n  digest = " + digest + "\n}\nrelease \"web\" {\n  chart = \"c/web\"\n  source = \"https://x\"\n  version = \"1.0.0\"\n  digest = " + digest + "\n}\n", `release "web" is locked twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, source.LockFileName), []byte(tc.text), 0o644)
			_, diags := source.ReadLock(dir)
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, diags)
			}
		})
	}
	// No lock file is an empty lock.
	l, diags := source.ReadLock(t.TempDir())
	if diags.HasErrors() || len(l.Releases) != 0 {
		t.Fatalf("missing lock file: %v %v", l, diags)
	}
}

// TestReadLockHostile reads lock files an untrusted stack directory could
// hold: links to devices and host files, FIFOs. Each is a diagnostic,
// quickly.
func TestReadLockHostile(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(path string) error
		want string
	}{
		{"symlink to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "symlink to /dev/zero, which is a character device"},
		{"symlink to /etc/passwd", func(p string) error { return os.Symlink("/etc/passwd", p) }, "outside the stack directory"},
		{"FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "is a FIFO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.make(filepath.Join(dir, source.LockFileName)); err != nil {
				t.Fatal(err)
			}
			done := make(chan string, 1)
			go func() {
				_, diags := source.ReadLock(dir)
				done <- diags.Error()
			}()
			select {
			case got := <-done:
				if !strings.Contains(got, tc.want) {
					t.Fatalf("want %q, got %s", tc.want, got)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("hung")
			}
		})
	}
}
