package chart

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteDir writes the rendered documents under dir the way
// `helm template --output-dir` does: one file per template path, documents
// appended in output order; wrote is told each file written.
func (r *Rendered) WriteDir(dir string, includeCRDs bool, wrote func(path string)) error {
	written := map[string]bool{}
	write := func(name, data string) error {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if written[p] {
			flags = os.O_APPEND | os.O_WRONLY
		}
		f, err := os.OpenFile(p, flags, 0o644)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, "---\n# Source: %s\n%s\n", name, data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		written[p] = true
		wrote(p)
		return nil
	}
	if includeCRDs {
		for _, c := range r.CRDs {
			if err := write(c.Name, string(c.Data)); err != nil {
				return err
			}
		}
	}
	for _, m := range r.Manifests {
		if err := write(m.Path, m.Content); err != nil {
			return err
		}
	}
	for _, h := range r.Hooks {
		if err := write(h.Path, h.Manifest); err != nil {
			return err
		}
	}
	return nil
}
