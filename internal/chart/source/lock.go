package source

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/convoy-sh/convoy/internal/safefile"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// LockFileName is the lock file beside a stack's .hcl files.
const LockFileName = "convoy.lock.hcl"

// maxLockFileSize bounds the lock file: hundreds of releases take a few
// hundred kilobytes.
const maxLockFileSize = 16 << 20

// LocalSource is the source of a lock entry for a local chart: only its
// fetched dependencies are locked.
const LocalSource = "local"

// Lock is a stack's lock file: for each release block whose chart comes
// from a repository or registry, what `convoy init` resolved.
type Lock struct {
	Releases map[string]LockedRelease
}

// LockedRelease is one release's entry: the chart as written and the
// constraint it was resolved under, and the result.
type LockedRelease struct {
	Chart      string // as written in the stack ("repo/name", "oci://…")
	Constraint string
	Resolved
}

type lockFile struct {
	Releases []lockRelease `hcl:"release,block"`
}

type lockRelease struct {
	Name         string    `hcl:"name,label"`
	Chart        string    `hcl:"chart"`
	Source       string    `hcl:"source"`
	Constraint   string    `hcl:"constraint,optional"`
	Version      string    `hcl:"version"`
	Digest       string    `hcl:"digest,optional"` // "" for a local chart
	Manifest     string    `hcl:"manifest,optional"`
	Dependencies []lockDep `hcl:"dependency,block"`
}

type lockDep struct {
	Name         string    `hcl:"name,label"`
	Source       string    `hcl:"source"`
	Version      string    `hcl:"version"`
	Digest       string    `hcl:"digest"`
	Manifest     string    `hcl:"manifest,optional"`
	Dependencies []lockDep `hcl:"dependency,block"`
}

// ReadLock reads dir's lock file; a missing file is an empty lock.
func ReadLock(dir string) (*Lock, hcl.Diagnostics) {
	path := filepath.Join(dir, LockFileName)
	lock := &Lock{Releases: map[string]LockedRelease{}}
	// A stack directory may be hostile: the lock file must be a regular
	// file in it, and is read only up to a limit.
	src, err := safefile.Dir{Path: dir, Desc: "the stack directory"}.Read(LockFileName, maxLockFileSize)
	if errors.Is(err, os.ErrNotExist) {
		return lock, nil
	}
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read the lock file", Detail: err.Error()}}
	}
	f, diags := hclparse.NewParser().ParseHCL(src, path)
	if diags.HasErrors() {
		return nil, diags
	}
	var lf lockFile
	diags = append(diags, gohcl.DecodeBody(f.Body, nil, &lf)...)
	if diags.HasErrors() {
		return nil, diags
	}
	for _, r := range lf.Releases {
		if _, dup := lock.Releases[r.Name]; dup {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate release in the lock file", Detail: fmt.Sprintf("%s: release %q is locked twice; run `convoy init` to rewrite it.", path, r.Name)})
			continue
		}
		for _, d := range []string{r.Digest, r.Manifest} {
			if _, err := parseDigest(d); d != "" && err != nil {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid digest in the lock file", Detail: fmt.Sprintf("%s: release %q: %s; run `convoy init --upgrade` to rewrite it.", path, r.Name, err)})
			}
		}
		lock.Releases[r.Name] = LockedRelease{
			Chart:      r.Chart,
			Constraint: r.Constraint,
			Resolved:   Resolved{Source: r.Source, Name: chartName(r.Chart), Version: r.Version, Digest: r.Digest, Manifest: r.Manifest, Dependencies: fromLockDeps(r.Dependencies)},
		}
	}
	return lock, diags
}

func chartName(chart string) string {
	if i := len(chart) - 1; i >= 0 {
		for j := i; j >= 0; j-- {
			if chart[j] == '/' {
				chart = chart[j+1:]
				break
			}
		}
	}
	name, _, _ := cutAt(chart)
	return name
}

func cutAt(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '@' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func fromLockDeps(ds []lockDep) []Resolved {
	var out []Resolved
	for _, d := range ds {
		out = append(out, Resolved{Source: d.Source, Name: d.Name, Version: d.Version, Digest: d.Digest, Manifest: d.Manifest, Dependencies: fromLockDeps(d.Dependencies)})
	}
	return out
}

// Bytes renders the lock file, releases in name order.
func (l *Lock) Bytes() []byte {
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	for i, name := range slices.Sorted(maps.Keys(l.Releases)) {
		if i > 0 {
			body.AppendNewline()
		}
		r := l.Releases[name]
		b := body.AppendNewBlock("release", []string{name}).Body()
		b.SetAttributeValue("chart", cty.StringVal(r.Chart))
		b.SetAttributeValue("source", cty.StringVal(r.Source))
		if r.Constraint != "" {
			b.SetAttributeValue("constraint", cty.StringVal(r.Constraint))
		}
		b.SetAttributeValue("version", cty.StringVal(r.Version))
		if r.Digest != "" {
			b.SetAttributeValue("digest", cty.StringVal(r.Digest))
		}
		if r.Manifest != "" {
			b.SetAttributeValue("manifest", cty.StringVal(r.Manifest))
		}
		writeDeps(b, r.Dependencies)
	}
	header := "# This file is maintained by `convoy init`: the chart version and digest\n# each release resolved to. Commit it with the stack.\n\n"
	return append([]byte(header), hclwrite.Format(f.Bytes())...)
}

func writeDeps(b *hclwrite.Body, deps []Resolved) {
	for _, d := range deps {
		b.AppendNewline()
		db := b.AppendNewBlock("dependency", []string{d.Name}).Body()
		db.SetAttributeValue("source", cty.StringVal(d.Source))
		db.SetAttributeValue("version", cty.StringVal(d.Version))
		db.SetAttributeValue("digest", cty.StringVal(d.Digest))
		if d.Manifest != "" {
			db.SetAttributeValue("manifest", cty.StringVal(d.Manifest))
		}
		writeDeps(db, d.Dependencies)
	}
}

// Write writes the lock file into dir atomically.
func (l *Lock) Write(dir string) error {
	path := filepath.Join(dir, LockFileName)
	if err := writeFileAtomic(path, l.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
