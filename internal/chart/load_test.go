package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const minimalChartYAML = "apiVersion: v2\nname: c\nversion: 1.0.0\n"

type tarEntry struct {
	hdr  tar.Header
	data string
}

func tarGz(t *testing.T, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := e.hdr
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeReg && h.Size == 0 {
			h.Size = int64(len(e.data))
		}
		h.Mode = 0o644
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.data)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func file(name, data string) tarEntry {
	return tarEntry{hdr: tar.Header{Name: name}, data: data}
}

func TestLoadArchiveHostile(t *testing.T) {
	chartYAML := file("c/Chart.yaml", minimalChartYAML)
	many := []tarEntry{chartYAML}
	for i := range 30 {
		many = append(many, file("c/files/f"+strings.Repeat("x", i), "x"))
	}
	nested := tarGz(t, file("s/Chart.yaml", "apiVersion: v2\nname: s\nversion: 1.0.0\n"), file("s/big", strings.Repeat("b", 600)))
	tests := []struct {
		name    string
		archive []byte
		limits  Limits
		wantErr error
		wantMsg string
	}{
		{name: "parent traversal", archive: tarGz(t, chartYAML, file("c/../../etc/passwd", "x")), wantErr: ErrArchiveParentDir},
		{name: "absolute path", archive: tarGz(t, chartYAML, file("c//etc/passwd", "x")), wantErr: ErrArchiveAbsolutePath},
		{name: "windows drive", archive: tarGz(t, chartYAML, file("c/C:/x", "x")), wantErr: ErrArchiveDriveName},
		{name: "symlink", archive: tarGz(t, chartYAML, tarEntry{hdr: tar.Header{Name: "c/templates/x.yaml", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}), wantErr: ErrArchiveLink},
		{name: "hard link", archive: tarGz(t, chartYAML, tarEntry{hdr: tar.Header{Name: "c/values.yaml", Typeflag: tar.TypeLink, Linkname: "c/Chart.yaml"}}), wantErr: ErrArchiveLink},
		{name: "device", archive: tarGz(t, chartYAML, tarEntry{hdr: tar.Header{Name: "c/dev", Typeflag: tar.TypeChar}}), wantErr: ErrArchiveIrregular},
		{name: "fifo", archive: tarGz(t, chartYAML, tarEntry{hdr: tar.Header{Name: "c/fifo", Typeflag: tar.TypeFifo}}), wantErr: ErrArchiveIrregular},
		{name: "too many files", archive: tarGz(t, many...), limits: Limits{MaxFiles: 10}, wantErr: ErrLimit, wantMsg: "more than 10 files"},
		{name: "file too large", archive: tarGz(t, chartYAML, file("c/big", strings.Repeat("a", 2000))), limits: Limits{MaxFileBytes: 1000}, wantErr: ErrLimit, wantMsg: "file big is larger than 1000 bytes"},
		{name: "chart too large", archive: tarGz(t, chartYAML, file("c/a", strings.Repeat("a", 600)), file("c/b", strings.Repeat("b", 600))), limits: Limits{MaxBytes: 1000}, wantErr: ErrLimit, wantMsg: "decompressed chart is larger than the maximum size 1000"},
		{name: "nested archive shares the budget", archive: tarGz(t, chartYAML, file("c/a", strings.Repeat("a", 500)), tarEntry{hdr: tar.Header{Name: "c/charts/s-1.0.0.tgz"}, data: string(nested)}), limits: Limits{MaxBytes: 1200}, wantErr: ErrLimit},
		{name: "empty archive", archive: tarGz(t), wantErr: ErrArchiveEmpty},
		{name: "Chart.yaml at the root", archive: tarGz(t, file("Chart.yaml", minimalChartYAML)), wantMsg: "chart yaml not in base directory"},
		{name: "not gzip", archive: []byte("plain text"), wantMsg: "gzip: invalid header"},
		{name: "no Chart.yaml", archive: tarGz(t, file("c/values.yaml", "a: 1\n")), wantMsg: "Chart.yaml file is missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadArchiveWithLimits(bytes.NewReader(tc.archive), tc.limits)
			if err == nil {
				t.Fatalf("loaded %v, want an error", c.Name())
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %q is not %v", err, tc.wantErr)
			}
			if tc.wantMsg != "" && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tc.wantMsg)
			}
		})
	}
}

func TestLoadArchiveNestedWithinBudget(t *testing.T) {
	nested := tarGz(t, file("s/Chart.yaml", "apiVersion: v2\nname: s\nversion: 1.0.0\n"))
	c, err := LoadArchive(bytes.NewReader(tarGz(t,
		file("c/Chart.yaml", minimalChartYAML),
		file("c/values.yaml", "a: 1\n"),
		tarEntry{hdr: tar.Header{Name: "c/charts/s-1.0.0.tgz"}, data: string(nested)},
	)))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Dependencies()) != 1 || c.Dependencies()[0].Name() != "s" || c.Dependencies()[0].Parent() != c {
		t.Fatalf("subchart not loaded: %+v", c.Dependencies())
	}
	if c.Values["a"] != float64(1) || string(c.RawValues) != "a: 1\n" {
		t.Errorf("values %v / %q", c.Values, c.RawValues)
	}
}

func TestLoadDirSymlinks(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	mk := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "c")
		must(t, os.MkdirAll(filepath.Join(dir, "templates"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte(minimalChartYAML), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "real.txt"), []byte("r"), 0o644))
		return dir
	}
	t.Run("inside the chart is followed", func(t *testing.T) {
		dir := mk(t)
		must(t, os.Symlink("real.txt", filepath.Join(dir, "link.txt")))
		c, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if string(c.filesMap()["link.txt"]) != "r" {
			t.Errorf("symlink not followed: %q", c.filesMap()["link.txt"])
		}
	})
	t.Run("outside the chart is refused", func(t *testing.T) {
		dir := mk(t)
		must(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "templates", "leak.yaml")))
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), "symlink templates/leak.yaml points outside the chart directory") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("directory outside the chart is refused", func(t *testing.T) {
		dir := mk(t)
		must(t, os.Symlink(outside, filepath.Join(dir, "files")))
		if _, err := Load(dir); err == nil {
			t.Fatal("loaded a chart with a symlinked outside directory")
		}
	})
}

// TestLoadHostile loads charts with devices and FIFOs where files should
// be: each is an error, quickly, without reading them.
func TestLoadHostile(t *testing.T) {
	mk := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "c")
		must(t, os.MkdirAll(filepath.Join(dir, "templates"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte(minimalChartYAML), 0o644))
		return dir
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the path to load
		want  string
	}{
		{"helmignore is a symlink to /dev/zero", func(t *testing.T, dir string) string {
			must(t, os.Symlink("/dev/zero", filepath.Join(dir, ".helmignore")))
			return dir
		}, ".helmignore is a symlink to /dev/zero, which is a character device, not a regular file"},
		{"helmignore is a FIFO", func(t *testing.T, dir string) string {
			must(t, syscall.Mkfifo(filepath.Join(dir, ".helmignore"), 0o644))
			return dir
		}, ".helmignore is a FIFO"},
		{"template is a FIFO", func(t *testing.T, dir string) string {
			must(t, syscall.Mkfifo(filepath.Join(dir, "templates", "x.yaml"), 0o644))
			return dir
		}, "cannot load irregular file"},
		{"template is a symlink to /dev/zero", func(t *testing.T, dir string) string {
			must(t, os.Symlink("/dev/zero", filepath.Join(dir, "templates", "x.yaml")))
			return dir
		}, "points outside the chart directory"},
		{"chart archive is a FIFO", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "c.tgz")
			must(t, syscall.Mkfifo(p, 0o644))
			return p
		}, "is a FIFO, not a regular file"},
		{"chart archive is /dev/zero", func(t *testing.T, dir string) string {
			return "/dev/zero"
		}, "/dev/zero is a character device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.setup(t, mk(t))
			done := make(chan error, 1)
			go func() {
				_, err := Load(p)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("hung")
			}
		})
	}
}

func TestHelmignore(t *testing.T) {
	rules, err := parseIgnore([]byte("# comment\n*.bak\nsecrets/\n/top.txt\nconf/*.ini\n"))
	if err != nil {
		t.Fatal(err)
	}
	rules.addDefaults()
	tests := []struct {
		name  string
		isDir bool
		want  bool
	}{
		{"a.bak", false, true},
		{"deep/dir/b.bak", false, true},
		{"secrets", true, true},
		{"secrets", false, false},
		{"top.txt", false, true},
		{"sub/top.txt", false, false},
		{"conf/a.ini", false, true},
		{"other/conf/a.ini", false, false},
		{"templates/.hidden", false, true},
		{"templates/visible.yaml", false, false},
		{"values.yaml", false, false},
	}
	for _, tc := range tests {
		if got := rules.ignore(tc.name, tc.isDir); got != tc.want {
			t.Errorf("ignore(%q, dir=%v) = %v, want %v", tc.name, tc.isDir, got, tc.want)
		}
	}
	if _, err := parseIgnore([]byte("a/**/b\n")); err == nil {
		t.Error("** accepted")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
