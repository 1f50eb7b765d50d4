package chart

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/convoy-sh/convoy/internal/safefile"
	"sigs.k8s.io/yaml"
)

// Load loads a chart from a directory or a .tgz archive.
func Load(name string) (*Chart, error) {
	return LoadWithLimits(name, Limits{})
}

// LoadWithLimits is Load with explicit size and file-count limits.
func LoadWithLimits(name string, l Limits) (*Chart, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	b := newBudget(l)
	if fi.IsDir() {
		files, err := readDir(name, b)
		if err != nil {
			return nil, err
		}
		return loadFiles(files, b)
	}
	// Only a regular file: opening a FIFO would block, and a device could
	// be read forever.
	f, err := safefile.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 3)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, []byte("\x1f\x8b\x08")) {
		if strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".yaml") {
			return nil, fmt.Errorf("file '%s' seems to be a YAML file, but expected a gzipped archive", name)
		}
		return nil, fmt.Errorf("file '%s' does not appear to be a gzipped archive", name)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return loadArchive(f, b)
}

// LoadArchive loads a chart from a gzipped tar stream.
func LoadArchive(r io.Reader) (*Chart, error) {
	return loadArchive(r, newBudget(Limits{}))
}

// LoadArchiveWithLimits is LoadArchive with explicit limits.
func LoadArchiveWithLimits(r io.Reader, l Limits) (*Chart, error) {
	return loadArchive(r, newBudget(l))
}

func loadArchive(r io.Reader, b *budget) (*Chart, error) {
	files, err := readArchive(r, b)
	if err != nil {
		return nil, err
	}
	return loadFiles(files, b)
}

// readDir reads a chart directory honouring .helmignore. Symlinks are
// followed only when they stay inside the chart directory.
func readDir(dir string, b *budget) ([]*File, error) {
	top, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	realTop, err := filepath.EvalSymlinks(top)
	if err != nil {
		return nil, err
	}
	rules := &ignoreRules{}
	switch data, err := (safefile.Dir{Path: top, Desc: "the chart directory"}).Read(".helmignore", b.limits.MaxFileBytes); {
	case err == nil:
		if rules, err = parseIgnore(data); err != nil {
			return nil, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	rules.addDefaults()
	var files []*File
	var walk func(abs, rel string) error
	walk = func(abs, rel string) error {
		entries, err := os.ReadDir(abs)
		if err != nil {
			return err
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
		for _, e := range entries {
			p := filepath.Join(abs, e.Name())
			n := path.Join(rel, e.Name())
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			link := fi.Mode()&os.ModeSymlink != 0
			if link {
				target, err := filepath.EvalSymlinks(p)
				if err != nil {
					return fmt.Errorf("error reading %s: %w", n, err)
				}
				if target != realTop && !strings.HasPrefix(target, realTop+string(filepath.Separator)) {
					return fmt.Errorf("symlink %s points outside the chart directory", n)
				}
				if fi, err = os.Stat(p); err != nil {
					return err
				}
			}
			if fi.IsDir() {
				if rules.ignore(n, true) {
					continue
				}
				if err := walk(p, n); err != nil {
					return err
				}
				continue
			}
			if rules.ignore(n, false) {
				continue
			}
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("cannot load irregular file %s as it has file mode type bits set", p)
			}
			if err := b.takeFile(n); err != nil {
				return err
			}
			// fi is the file itself (its Lstat), or the target of a
			// symlink checked above, opened through the symlink.
			var f *os.File
			if link {
				f, err = safefile.Open(p)
			} else {
				f, err = safefile.OpenWalked(p, fi)
			}
			if err != nil {
				return err
			}
			data, err := b.read(n, f, fi.Size())
			f.Close()
			if err != nil {
				return fmt.Errorf("error reading %s: %w", n, err)
			}
			files = append(files, &File{Name: n, Data: bytes.TrimPrefix(data, utf8BOM), ModTime: fi.ModTime()})
		}
		return nil
	}
	if err := walk(top, ""); err != nil {
		return nil, err
	}
	return files, nil
}

// loadFiles builds a chart from its files (names relative to the chart).
func loadFiles(files []*File, b *budget) (*Chart, error) {
	c := &Chart{schemaCache: &compiledSchema{}, templates: &templateCache{}, facts: &facts{}}
	subcharts := map[string][]*File{}
	var subchartOrder []string
	for _, f := range files {
		c.Raw = append(c.Raw, &File{Name: f.Name, Data: f.Data, ModTime: f.ModTime})
		if f.Name == "Chart.yaml" {
			if c.Metadata == nil {
				c.Metadata = &Metadata{}
			}
			if err := yaml.Unmarshal(f.Data, c.Metadata); err != nil {
				return nil, fmt.Errorf("cannot load Chart.yaml: %w", err)
			}
			if c.Metadata.APIVersion == "" {
				c.Metadata.APIVersion = APIVersionV1
			}
			c.ModTime = f.ModTime
		}
	}
	for _, f := range files {
		switch {
		case f.Name == "Chart.yaml":
		case f.Name == "Chart.lock":
			c.Lock = &Lock{}
			if err := yaml.Unmarshal(f.Data, &c.Lock); err != nil {
				return nil, fmt.Errorf("cannot load Chart.lock: %w", err)
			}
		case f.Name == "values.yaml":
			v, err := ParseValues(f.Data)
			if err != nil {
				return nil, fmt.Errorf("cannot load values.yaml: %w", err)
			}
			c.Values = v
			c.RawValues = f.Data
		case f.Name == "values.schema.json":
			c.Schema = f.Data
			c.SchemaModTime = f.ModTime
		case f.Name == "requirements.yaml":
			if c.Metadata == nil {
				c.Metadata = &Metadata{}
			}
			if err := yaml.Unmarshal(f.Data, c.Metadata); err != nil {
				return nil, fmt.Errorf("cannot load requirements.yaml: %w", err)
			}
			if c.Metadata.APIVersion == APIVersionV1 {
				c.Files = append(c.Files, f)
			}
		case f.Name == "requirements.lock":
			c.Lock = &Lock{}
			if err := yaml.Unmarshal(f.Data, &c.Lock); err != nil {
				return nil, fmt.Errorf("cannot load requirements.lock: %w", err)
			}
			if c.Metadata == nil {
				c.Metadata = &Metadata{}
			}
			if c.Metadata.APIVersion == APIVersionV1 {
				c.Files = append(c.Files, f)
			}
		case strings.HasPrefix(f.Name, "templates/"):
			c.Templates = append(c.Templates, f)
		case strings.HasPrefix(f.Name, "charts/"):
			if path.Ext(f.Name) == ".prov" {
				c.Files = append(c.Files, f)
				continue
			}
			rest := strings.TrimPrefix(f.Name, "charts/")
			cname, _, _ := strings.Cut(rest, "/")
			if _, ok := subcharts[cname]; !ok {
				subchartOrder = append(subchartOrder, cname)
			}
			subcharts[cname] = append(subcharts[cname], &File{Name: rest, Data: f.Data, ModTime: f.ModTime})
		default:
			c.Files = append(c.Files, f)
		}
	}
	if c.Metadata == nil {
		return nil, errors.New("Chart.yaml file is missing") //nolint:staticcheck // Helm's text
	}
	if err := c.Metadata.validate(); err != nil {
		return nil, err
	}
	c.files = c.filesMap()
	// Helm iterates a map here; convoy loads subcharts in name order so
	// that the dependency list (and everything derived from it) is stable.
	sort.Strings(subchartOrder)
	for _, n := range subchartOrder {
		files := subcharts[n]
		var sc *Chart
		var err error
		switch {
		case strings.IndexAny(n, "_.") == 0:
			continue
		case path.Ext(n) == ".tgz":
			if files[0].Name != n {
				return nil, fmt.Errorf("error unpacking subchart tar in %s: expected %s, got %s", c.Name(), n, files[0].Name)
			}
			sc, err = loadArchive(bytes.NewReader(files[0].Data), b)
		default:
			var inner []*File
			for _, f := range files {
				_, rest, ok := strings.Cut(f.Name, "/")
				if !ok {
					continue
				}
				inner = append(inner, &File{Name: rest, Data: f.Data, ModTime: f.ModTime})
			}
			sc, err = loadFiles(inner, b)
		}
		if err != nil {
			return nil, fmt.Errorf("error unpacking subchart %s in %s: %w", n, c.Name(), err)
		}
		sc.parent = c
		c.dependencies = append(c.dependencies, sc)
	}
	return c, nil
}
