// Package safefile reads files named by possibly hostile input: a stack
// directory from an untrusted pull request, a path in a stack expression.
//
// A relative name is resolved against a directory and, with every symlink
// followed, must stay inside it; an absolute name is read wherever it leads
// (writing it was the user's explicit choice). Either way only regular files
// are opened: a FIFO, socket or device is refused after a stat, before any
// open, and the opened file is checked again with fstat. Opens never block
// (O_NONBLOCK), and reads stop at a limit however large the file claims to
// be, so /dev/zero, /proc files and FIFOs cannot hang or exhaust memory.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Sentinel errors wrapped by *Error.
var (
	ErrOutside    = errors.New("outside the directory")
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("file too large")
)

// Error says why a file was refused or could not be read.
type Error struct {
	// Name is the path as given.
	Name string
	// Target is where Name leads through symlinks, or "" when no symlink
	// is involved.
	Target string
	// Within describes the directory Name had to stay in, for messages
	// ("the stack directory").
	Within string
	// Mode is the file's type, for ErrNotRegular.
	Mode fs.FileMode
	// Limit is the byte limit, for ErrTooLarge.
	Limit int64
	// Err is ErrOutside, ErrNotRegular, ErrTooLarge or the error of the
	// file system (a *fs.PathError).
	Err error
}

func (e *Error) Error() string {
	subject, which := e.Name, e.Name+" is"
	if e.Target != "" {
		subject = fmt.Sprintf("%s is a symlink to %s", e.Name, e.Target)
		which = subject + ", which is"
	}
	switch e.Err {
	case ErrOutside:
		return fmt.Sprintf("%s outside %s", which, e.Within)
	case ErrNotRegular:
		return fmt.Sprintf("%s %s, not a regular file", which, describeMode(e.Mode))
	case ErrTooLarge:
		return fmt.Sprintf("%s larger than %d bytes", which, e.Limit)
	}
	var pe *fs.PathError
	if errors.As(e.Err, &pe) {
		return fmt.Sprintf("cannot read %s: %v", subject, pe.Err)
	}
	return fmt.Sprintf("cannot read %s: %v", subject, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// describeMode names a file type for messages.
func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "an irregular file"
}

// Dir is a directory that relative names must stay inside.
type Dir struct {
	// Path is the directory; "" is the working directory.
	Path string
	// Desc names it in messages, such as "the stack directory"; "" uses
	// Path.
	Desc string
}

// Stat resolves name and returns what it leads to (following symlinks),
// regular or not. It refuses, with an *Error, relative names that leave
// the directory.
func (d Dir) Stat(name string) (fs.FileInfo, error) {
	r, err := d.resolve(name)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(r.path)
	if err != nil {
		return nil, r.fail(err)
	}
	return fi, nil
}

// Open opens name for reading. It refuses, with an *Error, relative names
// that leave the directory and anything but a regular file; it never
// blocks on a FIFO.
func (d Dir) Open(name string) (*os.File, error) {
	f, _, err := d.open(name)
	return f, err
}

// Read reads name as Open does, refusing files longer than limit bytes.
// The limit is enforced while reading: sizes reported by stat are not
// trusted.
func (d Dir) Read(name string, limit int64) ([]byte, error) {
	f, r, err := d.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, r.fail(err)
	}
	if int64(len(data)) > limit {
		e := r.err(ErrTooLarge)
		e.Limit = limit
		return nil, e
	}
	return data, nil
}

func (d Dir) open(name string) (*os.File, resolved, error) {
	r, err := d.resolve(name)
	if err != nil {
		return nil, r, err
	}
	fi, err := os.Stat(r.path)
	if err != nil {
		return nil, r, r.fail(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, r, r.notRegular(fi.Mode())
	}
	var f *os.File
	if r.rel != "" {
		// The target was resolved without a race-free walk; opening it
		// through os.Root keeps a symlink swapped in meanwhile from
		// leading outside.
		root, err := os.OpenRoot(r.root)
		if err != nil {
			return nil, r, r.fail(err)
		}
		f, err = root.OpenFile(r.rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		root.Close()
		if err != nil {
			return nil, r, r.fail(err)
		}
	} else {
		f, err = os.OpenFile(r.path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil, r, r.fail(err)
		}
	}
	// The file may have been replaced between the stat and the open.
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, r, r.fail(err)
		}
		return nil, r, r.notRegular(fi.Mode())
	}
	return f, r, nil
}

// Open opens a regular file at an explicit path, wherever it leads. See
// Dir.Open.
func Open(path string) (*os.File, error) { return Dir{}.Open(abs(path)) }

// OpenWalked opens the regular file at path that a directory walk has
// just seen as walked (its Lstat: a regular file, no symlink), with two
// system calls where Open needs one per path element: the opened file
// must be the one walked (os.SameFile), so a file replaced meanwhile (by
// a symlink, a FIFO, another file) is refused, never read. Like Open, it
// never blocks.
func OpenWalked(path string, walked fs.FileInfo) (*os.File, error) {
	r := resolved{name: path, path: path}
	if !walked.Mode().IsRegular() {
		return nil, r.notRegular(walked.Mode())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, r.fail(err)
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, r.fail(err)
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, r.notRegular(fi.Mode())
	case !os.SameFile(walked, fi):
		f.Close()
		return nil, r.fail(errors.New("replaced while it was read"))
	}
	return f, nil
}

// Read reads a regular file at an explicit path, wherever it leads. See
// Dir.Read.
func Read(path string, limit int64) ([]byte, error) { return Dir{}.Read(abs(path), limit) }

func abs(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

// resolved is a name and where it leads.
type resolved struct {
	name   string
	path   string // the file to open: symlinks resolved when possible
	link   bool   // path differs from name because of symlinks
	root   string // the directory with symlinks resolved, for relative names
	rel    string // path relative to root, for relative names
	within string
}

func (r resolved) err(sentinel error) *Error {
	e := &Error{Name: r.name, Within: r.within, Err: sentinel}
	if r.link {
		e.Target = r.path
	}
	return e
}

func (r resolved) fail(err error) *Error { return r.err(err) }

func (r resolved) notRegular(m fs.FileMode) *Error {
	e := r.err(ErrNotRegular)
	e.Mode = m
	return e
}

// resolve follows the symlinks of name and checks that a relative name
// stays inside the directory.
func (d Dir) resolve(name string) (resolved, error) {
	r := resolved{name: name, within: d.Desc}
	if name == "" {
		return r, r.fail(errors.New("empty path"))
	}
	if filepath.IsAbs(name) {
		lexical := filepath.Clean(name)
		r.path = lexical
		if p, err := filepath.EvalSymlinks(lexical); err == nil {
			r.path, r.link = p, p != lexical
		}
		return r, nil
	}
	clean := filepath.Clean(name)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return r, r.err(ErrOutside)
	}
	dir := d.Path
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return r, r.fail(err)
	}
	if r.within == "" {
		r.within = dir
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return r, r.fail(err)
	}
	lexical := filepath.Join(root, clean)
	target, err := filepath.EvalSymlinks(lexical)
	if err != nil {
		// Missing, or a dangling symlink: nothing to read. Report it
		// under the name as given.
		r.path = lexical
		return r, r.fail(err)
	}
	r.path, r.link, r.root = target, target != lexical, root
	rel, err := filepath.Rel(root, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		// Say what the target is when it is not a regular file either:
		// a link to /dev/zero is better explained as a device.
		if fi, err := os.Stat(target); err == nil && !fi.Mode().IsRegular() {
			return r, r.notRegular(fi.Mode())
		}
		return r, r.err(ErrOutside)
	}
	r.rel = rel
	return r, nil
}

// LimitedReader reads at most N bytes of R and fails with ErrTooLarge past
// them, N then negative: io.LimitedReader ends as if R had, which a
// decompressed stream of unknown length must not (a plan file, a record's
// payload).
type LimitedReader struct {
	R io.Reader
	N int64
}

func (l *LimitedReader) Read(p []byte) (int, error) {
	if l.N < 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > l.N+1 {
		p = p[:l.N+1]
	}
	n, err := l.R.Read(p)
	l.N -= int64(n)
	if l.N < 0 {
		return n, ErrTooLarge
	}
	return n, err
}
