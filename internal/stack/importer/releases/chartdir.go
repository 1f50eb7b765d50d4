package releases

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/convoy-sh/convoy/internal/chart"
	"sigs.k8s.io/yaml"
)

// Bounds on what one chart written from a record may hold: a record is
// at most ~1 MiB compressed on a cluster, but nothing in it is trusted.
const (
	maxChartBytes = 64 << 20
	maxChartFiles = 10000
)

// unsafeDirChars are the characters a chart directory name does not keep.
var (
	unsafeDirChars = regexp.MustCompile(`[^A-Za-z0-9._+-]`)
	dotRuns        = regexp.MustCompile(`\.\.+`)
)

// chartDirName is charts/NAME-VERSION for a chart, safe as one path
// element whatever the record says.
func chartDirName(md *chart.Metadata) string {
	n := unsafeDirChars.ReplaceAllString(md.Name+"-"+md.Version, "_")
	n = dotRuns.ReplaceAllString(n, "_")
	n = strings.Trim(n, ".")
	if n == "" {
		n = "chart"
	}
	return n
}

// localPath checks that a file name from a record stays inside the chart
// directory: relative, slash-separated, no "..", no NUL or backslash.
func localPath(name string) (string, error) {
	if name == "" || strings.ContainsAny(name, "\x00\\") || path.IsAbs(name) || !filepath.IsLocal(filepath.FromSlash(name)) {
		return "", fmt.Errorf("the chart file %q would be written outside the chart directory", name)
	}
	return path.Clean(name), nil
}

// chartFiles is a chart directory's files from a chart decoded from a
// record: Chart.yaml, values.yaml, values.schema.json, Chart.lock, the
// templates and every other file (crds/ included). Records do not carry
// subcharts: a chart that declares dependencies comes back without them
// (the caller says so).
func chartFiles(c *chart.Chart) (map[string][]byte, error) {
	files := map[string][]byte{}
	total := 0
	add := func(name string, data []byte) error {
		p, err := localPath(name)
		if err != nil {
			return err
		}
		if len(files) >= maxChartFiles {
			return fmt.Errorf("the chart has more than %d files", maxChartFiles)
		}
		if total += len(data); total > maxChartBytes {
			return fmt.Errorf("the chart is larger than %d MiB", maxChartBytes>>20)
		}
		files[p] = data
		return nil
	}
	for _, f := range c.Templates {
		if f == nil {
			continue
		}
		if err := add(f.Name, f.Data); err != nil {
			return nil, err
		}
	}
	for _, f := range c.Files {
		if f == nil {
			continue
		}
		if err := add(f.Name, f.Data); err != nil {
			return nil, err
		}
	}
	// The chart's own files last: a record's file of the same name does
	// not replace them.
	md, err := yaml.Marshal(c.Metadata)
	if err != nil {
		return nil, fmt.Errorf("Chart.yaml: %w", err)
	}
	if err := add("Chart.yaml", md); err != nil {
		return nil, err
	}
	values := []byte("{}\n")
	if len(c.Values) > 0 {
		if values, err = yaml.Marshal(c.Values); err != nil {
			return nil, fmt.Errorf("values.yaml: %w", err)
		}
	}
	if err := add("values.yaml", values); err != nil {
		return nil, err
	}
	if len(c.Schema) > 0 {
		if err := add("values.schema.json", c.Schema); err != nil {
			return nil, err
		}
	}
	if c.Lock != nil {
		lock, err := yaml.Marshal(c.Lock)
		if err != nil {
			return nil, fmt.Errorf("Chart.lock: %w", err)
		}
		if err := add("Chart.lock", lock); err != nil {
			return nil, err
		}
	}
	return files, nil
}
