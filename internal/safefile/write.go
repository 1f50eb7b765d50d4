package safefile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteAtomic writes data to path through a temporary file in the same
// directory, given perm before any byte is written, and a rename: the file
// is whole or absent, never partly written.
func WriteAtomic(path string, data []byte, perm fs.FileMode) error {
	return WriteAtomicWith(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAtomicWith is WriteAtomic of what write writes, as it writes it
// (a large file is not held in memory first). A failed write leaves no
// file.
func WriteAtomicWith(path string, perm fs.FileMode, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
