package artifact

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// extract unpacks a stack archive into dir, which must be empty. Only
// regular files and directories under clean relative names are accepted;
// a name that repeats, the number of entries and the total size are
// refused past the limits. Files are created through an os.Root, so no
// name can lead outside dir even if a check here were wrong.
func extract(r io.Reader, dir string, limits Limits) error {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("the stack layer is not gzip: %w", err)
	}
	defer gz.Close()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(gz)
	var total int64
	n := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("the stack archive: %w", err)
		}
		n++
		if n > limits.files() {
			return fmt.Errorf("the stack archive has more than %d entries", limits.files())
		}
		name := strings.TrimSuffix(h.Name, "/")
		if err := checkName(name, false); err != nil {
			return fmt.Errorf("the stack archive entry %q: %w", h.Name, err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return fmt.Errorf("the stack archive entry %q: %w", h.Name, err)
			}
		case tar.TypeReg:
			if h.Size < 0 || total+h.Size > limits.unpacked() {
				return fmt.Errorf("the stack archive unpacks to more than %d bytes", limits.unpacked())
			}
			if d := path.Dir(name); d != "." {
				if err := root.MkdirAll(d, 0o755); err != nil {
					return fmt.Errorf("the stack archive entry %q: %w", h.Name, err)
				}
			}
			mode := os.FileMode(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			if err != nil {
				return fmt.Errorf("the stack archive entry %q: %w", h.Name, err)
			}
			w, err := io.Copy(f, io.LimitReader(tr, h.Size))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil && w != h.Size {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				return fmt.Errorf("the stack archive entry %q: %w", h.Name, err)
			}
			total += w
		default:
			return fmt.Errorf("the stack archive entry %q is a %s: a stack holds regular files and directories only", h.Name, typeName(h.Typeflag))
		}
	}
}

// checkName accepts clean relative slash paths without "..", ".", empty
// or backslashed elements ("." itself only when dot is true).
func checkName(name string, dot bool) error {
	if dot && name == "." {
		return nil
	}
	switch {
	case name == "" || name == ".":
		return errors.New("an empty name")
	case strings.HasPrefix(name, "/"):
		return errors.New("an absolute name")
	case strings.ContainsAny(name, "\\\x00"):
		return errors.New("a name with a backslash or NUL")
	case path.Clean(name) != name:
		return errors.New("a name that is not clean")
	}
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return errors.New("a name that leaves the directory (..)")
		}
	}
	if len(name) > 1024 {
		return errors.New("a name longer than 1024 bytes")
	}
	return nil
}

func typeName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symlink"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "device"
	case tar.TypeFifo:
		return "FIFO"
	}
	return fmt.Sprintf("entry of type %q", t)
}
