// Package diagtext renders HCL diagnostics for people (the offending source
// line with the range underlined, as hcl's text writer does, plus carets
// when there is no colour) and for machines (JSON).
package diagtext

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/convoy-sh/convoy/internal/safefile"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// diagWidth is the width diagnostics' details are wrapped to.
const diagWidth = 100

// Write renders diagnostics with hcl's text writer: the source
// line with the offending range underlined. Files are taken from known and,
// for diagnostics in other files (variable files), read from disk.
func Write(w io.Writer, diags hcl.Diagnostics, known map[string]*hcl.File, color bool) error {
	files := map[string]*hcl.File{}
	for k, v := range known {
		files[k] = v
	}
	p := hclparse.NewParser()
	for _, d := range diags {
		for _, rng := range []*hcl.Range{d.Subject, d.Context} {
			if rng == nil || rng.Filename == "" {
				continue
			}
			if _, ok := files[rng.Filename]; ok {
				continue
			}
			// Only the bytes are needed for snippets; parse errors do not matter.
			// A diagnostic may be about a file that is a FIFO, a device or a
			// link to a host file: show only regular files in their own
			// directory.
			dir, name := filepath.Split(rng.Filename)
			if src, err := (safefile.Dir{Path: dir}).Read(name, 4<<20); err == nil {
				f, _ := p.ParseHCL(src, rng.Filename)
				if f == nil {
					f = &hcl.File{}
				}
				f.Bytes = src
				files[rng.Filename] = f
			}
		}
	}
	for _, d := range diags {
		var buf bytes.Buffer
		if err := hcl.NewDiagnosticTextWriter(&buf, files, diagWidth, color).WriteDiagnostic(d); err != nil {
			return err
		}
		out := buf.Bytes()
		if !color {
			// Without colour, hcl's writer does not mark the offending
			// range; underline it with carets instead.
			out = addCarets(out, d, files)
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return nil
}

// addCarets inserts a line of carets under the subject's first source line
// in a rendered diagnostic.
func addCarets(rendered []byte, d *hcl.Diagnostic, files map[string]*hcl.File) []byte {
	if d.Subject == nil {
		return rendered
	}
	f := files[d.Subject.Filename]
	if f == nil || f.Bytes == nil {
		return rendered
	}
	src := f.Bytes
	start, end := d.Subject.Start.Byte, d.Subject.End.Byte
	if start < 0 || start > len(src) || end < start {
		return rendered
	}
	lineStart := bytes.LastIndexByte(src[:start], '\n') + 1
	lineEnd := len(src)
	if i := bytes.IndexByte(src[start:], '\n'); i >= 0 {
		lineEnd = start + i
	}
	end = min(end, lineEnd)
	var caret strings.Builder
	for _, r := range string(src[lineStart:start]) {
		if r == '\t' {
			caret.WriteByte('\t')
		} else {
			caret.WriteByte(' ')
		}
	}
	caret.WriteString(strings.Repeat("^", max(1, utf8.RuneCount(src[start:end]))))

	prefix := []byte(fmt.Sprintf("%4d: ", d.Subject.Start.Line))
	lines := bytes.SplitAfter(rendered, []byte("\n"))
	var out bytes.Buffer
	done := false
	for _, l := range lines {
		out.Write(l)
		if !done && bytes.HasPrefix(l, prefix) {
			out.WriteString(strings.Repeat(" ", len(prefix)))
			out.WriteString(strings.TrimRight(caret.String(), " "))
			out.WriteByte('\n')
			done = true
		}
	}
	return out.Bytes()
}

// JSONDiagnostic is the machine-readable form of a diagnostic.
type JSONDiagnostic struct {
	Severity string     `json:"severity"`
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail,omitempty"`
	Range    *jsonRange `json:"range,omitempty"`
}

type jsonRange struct {
	Filename string  `json:"filename"`
	Start    jsonPos `json:"start"`
	End      jsonPos `json:"end"`
}

type jsonPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// JSON converts diagnostics to their machine-readable form.
func JSON(diags hcl.Diagnostics) []JSONDiagnostic {
	out := make([]JSONDiagnostic, 0, len(diags))
	for _, d := range diags {
		jd := JSONDiagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			jd.Severity = "warning"
		}
		if d.Subject != nil {
			jd.Range = &jsonRange{
				Filename: d.Subject.Filename,
				Start:    jsonPos{d.Subject.Start.Line, d.Subject.Start.Column, d.Subject.Start.Byte},
				End:      jsonPos{d.Subject.End.Line, d.Subject.End.Column, d.Subject.End.Byte},
			}
		}
		out = append(out, jd)
	}
	return out
}
