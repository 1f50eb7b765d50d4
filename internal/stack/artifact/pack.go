package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/convoy-sh/convoy/internal/safefile"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Limits bound what Push packs and Fetch accepts. Zero fields take the
// defaults.
type Limits struct {
	// Layer bounds the compressed archive (default 64 MiB).
	Layer int64
	// Unpacked bounds the sum of the files' sizes (default 256 MiB).
	Unpacked int64
	// Files bounds the number of entries (default 20000).
	Files int
}

func (l Limits) layer() int64 {
	if l.Layer > 0 {
		return l.Layer
	}
	return 64 << 20
}

func (l Limits) unpacked() int64 {
	if l.Unpacked > 0 {
		return l.Unpacked
	}
	return 256 << 20
}

func (l Limits) files() int {
	if l.Files > 0 {
		return l.Files
	}
	return 20000
}

// packed is a stack directory as an archive.
type packed struct {
	// archive is the deterministic tar+gzip of the files.
	archive []byte
	// stackPath is the stack directory inside the archive ("." when the
	// archive's root is the stack directory).
	stackPath string
	files     int
}

// skipDirs are never packed: version control, not the stack.
var skipDirs = map[string]bool{".git": true, ".hg": true, ".svn": true}

// pack archives the stack directory and the local charts its release
// blocks name by relative path. The archive's root is the deepest
// directory holding them all, so relative paths that leave the stack
// directory (../charts/api) still hold once pulled. Symlinks are packed as
// the regular files they lead to, and only when they stay inside the
// directory packed; anything but regular files and directories is refused.
func pack(dir string, limits Limits) (*packed, error) {
	stackDir, err := realDir(dir)
	if err != nil {
		return nil, err
	}
	charts, err := localCharts(stackDir)
	if err != nil {
		return nil, err
	}
	roots := append([]string{stackDir}, charts...)
	base := commonDir(roots)
	files := map[string][]byte{} // archive path → content
	modes := map[string]bool{}   // archive path → executable
	var total int64
	for _, root := range roots {
		err := addTree(root, base, files, modes, &total, limits)
		if err != nil {
			return nil, err
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no files", dir)
	}
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			if dirs[d] {
				break
			}
			dirs[d] = true
		}
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		mode := int64(0o644)
		if modes[name] {
			mode = 0o755
		}
		data := files[name]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limits.layer() {
		return nil, fmt.Errorf("%s packs to %d bytes, more than the limit of %d", dir, buf.Len(), limits.layer())
	}
	rel, err := filepath.Rel(base, stackDir)
	if err != nil {
		return nil, err
	}
	return &packed{archive: buf.Bytes(), stackPath: filepath.ToSlash(rel), files: len(files) + len(dirs)}, nil
}

// addTree adds the regular files under root to files, by their path
// relative to base.
func addTree(root, base string, files map[string][]byte, modes map[string]bool, total *int64, limits Limits) error {
	d := safefile.Dir{Path: root, Desc: root}
	return filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != root && skipDirs[e.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		relRoot, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if e.Type()&fs.ModeSymlink != 0 {
			fi, err := d.Stat(relRoot)
			if err != nil {
				return err
			}
			if fi.IsDir() {
				return fmt.Errorf("%s is a symlink to a directory: convoy push packs regular files and directories only", p)
			}
		}
		relBase, err := filepath.Rel(base, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(relBase)
		if _, ok := files[name]; ok {
			return nil // a chart inside the stack directory
		}
		if len(files) >= limits.files() {
			return fmt.Errorf("%s: more than %d files to pack", root, limits.files())
		}
		data, err := d.Read(relRoot, limits.unpacked()-*total)
		if err != nil {
			return err
		}
		*total += int64(len(data))
		files[name] = data
		if fi, err := d.Stat(relRoot); err == nil && fi.Mode()&0o111 != 0 {
			modes[name] = true
		}
		return nil
	})
}

// localCharts are the directories (or archives' directories) of the local
// charts that release blocks name with a literal relative path. A chart
// named by an absolute or home path cannot travel: it is refused with its
// source position.
func localCharts(stackDir string) ([]string, error) {
	cfg, diags := config.LoadDir(stackDir)
	if diags.HasErrors() {
		return nil, &DiagnosticsError{Diags: diags, Config: cfg}
	}
	var out []string
	var bad hcl.Diagnostics
	for _, name := range slices.Sorted(maps.Keys(cfg.Releases)) {
		r := cfg.Releases[name]
		if r.Chart == nil {
			continue
		}
		v, d := r.Chart.Value(nil)
		if d.HasErrors() || !v.IsKnown() || v.IsNull() || !v.Type().Equals(cty.String) {
			continue // computed: it must then lie inside the stack directory
		}
		c := v.AsString()
		switch {
		case c == "" || strings.HasPrefix(c, "oci://"):
			continue
		case strings.HasPrefix(c, "/") || strings.HasPrefix(c, "~"):
			bad = append(bad, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Chart path cannot be pushed",
				Detail:   fmt.Sprintf("The chart %q is an absolute path, which means nothing on the machine that pulls the stack: name it relative to the stack directory.", c),
				Subject:  r.Chart.Range().Ptr(),
			})
			continue
		case !(c == "." || c == ".." || strings.HasPrefix(c, "./") || strings.HasPrefix(c, "../") || strings.HasSuffix(c, ".tgz")):
			continue // repository/chart
		}
		p := filepath.Join(stackDir, filepath.FromSlash(c))
		fi, err := os.Stat(p)
		if err != nil {
			bad = append(bad, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Local chart not found",
				Detail:   fmt.Sprintf("The chart %q cannot be packed: %v.", c, errors.Unwrap(err)),
				Subject:  r.Chart.Range().Ptr(),
			})
			continue
		}
		if !fi.IsDir() {
			p = filepath.Dir(p)
		}
		real, err := realDir(p)
		if err != nil {
			return nil, err
		}
		out = append(out, real)
	}
	if bad.HasErrors() {
		return nil, &DiagnosticsError{Diags: bad, Config: cfg}
	}
	return out, nil
}

// DiagnosticsError is a stack that cannot be packed, with the files its
// diagnostics point into.
type DiagnosticsError struct {
	Diags  hcl.Diagnostics
	Config *config.Config
}

func (e *DiagnosticsError) Error() string { return e.Diags.Error() }

// realDir is dir, absolute, with symlinks resolved.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return real, nil
}

// commonDir is the deepest directory holding every one of dirs (absolute,
// clean).
func commonDir(dirs []string) string {
	base := dirs[0]
	for _, d := range dirs[1:] {
		for !within(base, d) {
			base = filepath.Dir(base)
		}
	}
	return base
}

func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
