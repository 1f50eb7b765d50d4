package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stackDir builds a directory with hostile and harmless entries, and an
// outside directory next to it.
func stackDir(t *testing.T) (dir, outside string) {
	t.Helper()
	base := t.TempDir()
	dir, outside = filepath.Join(base, "stack"), filepath.Join(base, "outside")
	for _, d := range []string{dir, outside, filepath.Join(dir, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "plain.yaml"), "a: 1\n")
	write(filepath.Join(dir, "big.yaml"), strings.Repeat("x", 100))
	write(filepath.Join(outside, "secret"), "s3cret\n")
	links := map[string]string{
		"zero":        "/dev/zero",
		"passwd":      "/etc/passwd",
		"escape":      "../outside/secret",
		"sub/inside":  "../plain.yaml",
		"abs-inside":  filepath.Join(dir, "plain.yaml"),
		"dangling":    "nope",
		"to-fifo":     "fifo",
		"dir-link":    "sub",
		"escape-dir":  "../outside",
		"chain":       "sub/inside",
		"chain-out":   "escape",
		"self-loop":   "self-loop",
		"sub/up-zero": "../zero",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, outside
}

// withDeadline fails the test if f does not return within five seconds:
// a hang, not a slow machine.
func withDeadline(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("hung")
	}
}

func TestDirRead(t *testing.T) {
	dir, outside := stackDir(t)
	d := Dir{Path: dir, Desc: "the stack directory"}
	tests := []struct {
		name     string
		sentinel error  // nil: the read succeeds
		msg      string // substring of the error, or of the data on success
	}{
		{"plain.yaml", nil, "a: 1"},
		{"./sub/../plain.yaml", nil, "a: 1"},
		{"sub/inside", nil, "a: 1"},
		{"abs-inside", nil, "a: 1"},
		{"chain", nil, "a: 1"},
		{filepath.Join(outside, "secret"), nil, "s3cret"}, // written absolute: the user's choice
		{"zero", ErrNotRegular, "zero is a symlink to /dev/zero, which is a character device, not a regular file"},
		{"sub/up-zero", ErrNotRegular, "which is a character device"},
		{"/dev/zero", ErrNotRegular, "/dev/zero is a character device, not a regular file"},
		{"passwd", ErrOutside, "passwd is a symlink to /etc/passwd, which is outside the stack directory"},
		{"escape", ErrOutside, "which is outside the stack directory"},
		{"chain-out", ErrOutside, "which is outside the stack directory"},
		{"../outside/secret", ErrOutside, "../outside/secret is outside the stack directory"},
		{"fifo", ErrNotRegular, "fifo is a FIFO, not a regular file"},
		{"to-fifo", ErrNotRegular, "which is a FIFO"},
		{"sub", ErrNotRegular, "sub is a directory"},
		{"dir-link", ErrNotRegular, "which is a directory"},
		{"escape-dir", ErrNotRegular, "which is a directory"},
		{"dangling", fs.ErrNotExist, "cannot read dangling"},
		{"missing", fs.ErrNotExist, "cannot read missing: no such file or directory"},
		{"self-loop", nil, "cannot read self-loop"},
		{"big.yaml", ErrTooLarge, "big.yaml is larger than 10 bytes"},
		{"", nil, "empty path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withDeadline(t, func() {
				limit := int64(1 << 20)
				if tt.name == "big.yaml" {
					limit = 10
				}
				data, err := d.Read(tt.name, limit)
				wantErr := tt.sentinel != nil || strings.HasPrefix(tt.msg, "cannot") || tt.msg == "empty path"
				if !wantErr {
					if err != nil {
						t.Fatalf("err = %v", err)
					}
					if !strings.Contains(string(data), tt.msg) {
						t.Fatalf("data = %q", data)
					}
					return
				}
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("err = %v (%T), want *Error", err, err)
				}
				if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
					t.Errorf("err = %v, want %v", err, tt.sentinel)
				}
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("err = %q, want it to contain %q", err, tt.msg)
				}
			})
		})
	}
}

func TestDirStat(t *testing.T) {
	dir, _ := stackDir(t)
	d := Dir{Path: dir, Desc: "the stack directory"}
	withDeadline(t, func() {
		if fi, err := d.Stat("fifo"); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("Stat(fifo) = %v, %v", fi, err)
		}
		if _, err := d.Stat("passwd"); !errors.Is(err, ErrOutside) {
			t.Errorf("Stat(passwd) err = %v", err)
		}
		if _, err := d.Stat("missing"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(missing) err = %v", err)
		}
	})
}

func TestRead(t *testing.T) {
	dir, _ := stackDir(t)
	withDeadline(t, func() {
		if _, err := Read(filepath.Join(dir, "fifo"), 10); !errors.Is(err, ErrNotRegular) {
			t.Errorf("err = %v", err)
		}
		if _, err := Read(filepath.Join(dir, "passwd"), 1<<20); err != nil {
			t.Errorf("an explicit path may lead anywhere: %v", err)
		}
	})
}

// A file a walk saw is opened only if it is still that file: one swapped
// for a symlink (to a secret outside), a FIFO or another file after the
// walk's Lstat is refused, and nothing blocks.
func TestOpenWalked(t *testing.T) {
	dir, outside := stackDir(t)
	p := filepath.Join(dir, "plain.yaml")
	walked, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := OpenWalked(p, walked)
	if err != nil {
		t.Fatalf("the walked file: %v", err)
	}
	f.Close()

	swap := func(t *testing.T, replace func(string) error) error {
		t.Helper()
		q := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(q, []byte("a: 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		seen, err := os.Lstat(q)
		if err != nil {
			t.Fatal(err)
		}
		// Moved away, not removed: its inode stays taken.
		if err := os.Rename(q, q+".old"); err != nil {
			t.Fatal(err)
		}
		if err := replace(q); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			f, err := OpenWalked(q, seen)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			t.Fatal("OpenWalked blocked")
			return nil
		}
	}
	for name, mk := range map[string]func(string) error{
		"symlink outside": func(q string) error { return os.Symlink(filepath.Join(outside, "secret"), q) },
		"fifo":            func(q string) error { return syscall.Mkfifo(q, 0o644) },
		"another file":    func(q string) error { return os.WriteFile(q, []byte("b: 2\n"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			err := swap(t, mk)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("want a refusal (*Error), got %v", err)
			}
			if !strings.Contains(err.Error(), "/f") {
				t.Errorf("the refusal does not name the file: %v", err)
			}
		})
	}
	if _, err := OpenWalked(filepath.Join(dir, "sub"), mustLstat(t, filepath.Join(dir, "sub"))); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a directory: want ErrNotRegular, got %v", err)
	}
}

func mustLstat(t *testing.T, p string) fs.FileInfo {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
