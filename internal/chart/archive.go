package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
)

// Limits bound what a chart may expand to. Zero fields take the defaults.
type Limits struct {
	// MaxBytes is the total decompressed size of a chart, subcharts included.
	MaxBytes int64
	// MaxFileBytes is the size of the largest single file.
	MaxFileBytes int64
	// MaxFiles is the number of files, subcharts included.
	MaxFiles int
}

// Default limits: Helm's 100 MiB per chart (files included), plus a
// file-count bound Helm does not have (an archive of millions of empty files).
const (
	DefaultMaxBytes     = 100 << 20
	DefaultMaxFileBytes = 100 << 20
	DefaultMaxFiles     = 20000
)

// budget is what is left of Limits while loading one chart tree.
type budget struct {
	limits    Limits
	bytesLeft int64
	filesLeft int
}

func newBudget(l Limits) *budget {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	return &budget{limits: l, bytesLeft: l.MaxBytes, filesLeft: l.MaxFiles}
}

// ErrLimit is wrapped by every error about a chart exceeding Limits.
var ErrLimit = errors.New("chart exceeds limits")

func (b *budget) takeFile(name string) error {
	if b.filesLeft <= 0 {
		return fmt.Errorf("%w: more than %d files (at %s)", ErrLimit, b.limits.MaxFiles, name)
	}
	b.filesLeft--
	return nil
}

// read reads one file of declared size from r within the budget.
func (b *budget) read(name string, r io.Reader, size int64) ([]byte, error) {
	if size > b.limits.MaxFileBytes {
		return nil, fmt.Errorf("%w: file %s is larger than %d bytes", ErrLimit, name, b.limits.MaxFileBytes)
	}
	if size > b.bytesLeft {
		return nil, fmt.Errorf("%w: decompressed chart is larger than the maximum size %d", ErrLimit, b.limits.MaxBytes)
	}
	limit := min(b.bytesLeft, b.limits.MaxFileBytes) + 1
	data, err := readSized(r, size, limit)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(data)) > b.limits.MaxFileBytes {
		return nil, fmt.Errorf("%w: file %s is larger than %d bytes", ErrLimit, name, b.limits.MaxFileBytes)
	}
	if int64(len(data)) > b.bytesLeft {
		return nil, fmt.Errorf("%w: decompressed chart is larger than the maximum size %d", ErrLimit, b.limits.MaxBytes)
	}
	b.bytesLeft -= int64(len(data))
	return data, nil
}

// readSized reads r to its end, at most limit bytes, into a buffer of the
// size it declares (+1, to see its end): a chart's files are read without
// the copies io.ReadAll makes as it grows, which cost a real chart's plan
// more than reading them (kube-prometheus-stack: 8 MB in 1,193 files).
// The size is a hint: a reader longer or shorter than it is read as it is.
func readSized(r io.Reader, size, limit int64) ([]byte, error) {
	buf := make([]byte, 0, max(0, min(size, limit-1))+1)
	lr := io.LimitReader(r, limit)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

var (
	drivePathPattern = regexp.MustCompile(`^[a-zA-Z]:/`)
	utf8BOM          = []byte{0xEF, 0xBB, 0xBF}
)

// Archive errors, with Helm's wording where Helm has one.
var (
	ErrArchiveAbsolutePath = errors.New("chart illegally contains absolute paths")
	ErrArchiveParentDir    = errors.New("chart illegally references parent directory")
	ErrArchiveDriveName    = errors.New("chart contains illegally named files")
	ErrArchiveLink         = errors.New("chart archive contains a link")
	ErrArchiveIrregular    = errors.New("chart archive contains an irregular file")
	ErrArchiveEmpty        = errors.New("no files in chart archive")
)

// readArchive expands a gzipped tar into chart-relative files. The first
// path element (the chart's directory) is dropped, as Helm does.
func readArchive(in io.Reader, b *budget) ([]*File, error) {
	zr, err := gzip.NewReader(in)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var files []*File
	for {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch hd.Typeflag {
		case tar.TypeDir, tar.TypeXGlobalHeader, tar.TypeXHeader:
			continue
		case tar.TypeSymlink, tar.TypeLink:
			return nil, fmt.Errorf("%w: %q -> %q", ErrArchiveLink, hd.Name, hd.Linkname)
		case tar.TypeReg: // tar.Reader reports the old TypeRegA as TypeReg
		default:
			return nil, fmt.Errorf("%w: %q (type %q)", ErrArchiveIrregular, hd.Name, hd.Typeflag)
		}
		name, err := archiveEntryName(hd.Name)
		if err != nil {
			return nil, err
		}
		if err := b.takeFile(name); err != nil {
			return nil, err
		}
		data, err := b.read(name, tr, hd.Size)
		if err != nil {
			return nil, err
		}
		if int64(len(data)) < hd.Size {
			return nil, fmt.Errorf("reading %s: %w", name, io.ErrUnexpectedEOF)
		}
		files = append(files, &File{Name: name, Data: bytes.TrimPrefix(data, utf8BOM), ModTime: hd.ModTime})
	}
	if len(files) == 0 {
		return nil, ErrArchiveEmpty
	}
	return files, nil
}

func archiveEntryName(raw string) (string, error) {
	delim := "/"
	if strings.ContainsRune(raw, '\\') {
		delim = "\\"
	}
	parts := strings.Split(raw, delim)
	if parts[0] == "Chart.yaml" {
		return "", errors.New("chart yaml not in base directory")
	}
	n := strings.ReplaceAll(strings.Join(parts[1:], delim), delim, "/")
	if path.IsAbs(n) {
		return "", ErrArchiveAbsolutePath
	}
	n = path.Clean(n)
	if n == "." {
		return "", fmt.Errorf("chart illegally contains content outside the base directory: %q", raw)
	}
	if strings.HasPrefix(n, "..") {
		return "", ErrArchiveParentDir
	}
	if drivePathPattern.MatchString(n) {
		return "", ErrArchiveDriveName
	}
	return n, nil
}
