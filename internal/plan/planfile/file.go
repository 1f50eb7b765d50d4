// Package planfile reads and writes saved plans as bytes: the plan
// (internal/plan), what it was made from (Origin) and the snapshot of the
// stack directory, in a versioned, compressed format. It does no I/O of
// its own, to files or clusters: whether a saved plan still holds is the
// run's question (internal/run verifies it under the stack lock).
package planfile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/convoy-sh/convoy/internal/jsonstream"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/safefile"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// fileKind marks a convoy plan file.
const fileKind = "convoy-plan"

// FormatVersion is the version of the plan file's layout, apart from the
// --json schema (plan.FormatVersion): it changes when a file written by
// one convoy cannot be applied by another. Version 4 compresses the file
// and embeds the stack snapshot; version 5 may name the snapshot by the
// digest of the OCI artifact it was pulled from instead (Snapshot.Source);
// version 6 types the observations of live objects
// (plan.ObservedObject.Kind) where version 5 prefixed their hashes. Files
// of versions 4 and 5 are read as well: their observations are typed on
// reading (plan.ObservedObject.UpgradeLegacy).
const FormatVersion = 6

// oldestReadable is the oldest format version Decode reads: a version 4
// file is a version 5 file whose snapshot is embedded.
const oldestReadable = 4

// typedObservations is the first format version whose observations carry
// their kind.
const typedObservations = 6

// MaxSize bounds a plan file, uncompressed.
const MaxSize = 256 << 20

// gzipMagic starts every file of format version 4 and later; older files
// are JSON.
var gzipMagic = []byte{0x1f, 0x8b}

// document is the saved plan as encoded.
type document struct {
	Kind          string
	FormatVersion int
	// SensitiveValues says that the file holds sensitive values unmasked
	// (apply needs them): keep it as secret as the values themselves.
	SensitiveValues bool    `json:",omitempty"`
	Origin          *Origin `json:",omitempty"`
	// Stack is the snapshot of the stack directory.
	Stack *Snapshot `json:",omitempty"`
	Plan  *plan.Plan
}

// File is a saved plan and what it was made from.
type File struct {
	Plan *plan.Plan
	// Origin is nil in files saved without one (apply then needs the
	// stack's flags).
	Origin *Origin
	// Stack is the stack directory the plan was made from, packed as
	// convoy push packs it; nil in files saved without one.
	Stack *Snapshot
}

// Snapshot is a packed stack directory (artifact.Snapshot's content),
// embedded (Archive) or named by the OCI artifact it was pulled from
// (Source and Digest: what to pull again, verified by digest, when the
// stack directory is gone).
type Snapshot struct {
	// Archive is the deterministic tar+gzip of the stack's files; empty
	// when Source names the artifact.
	Archive []byte `json:",omitempty"`
	// StackPath is the stack directory inside the archive.
	StackPath string
	// Source is the artifact's reference pinned to its digest
	// (oci://REGISTRY/REPO@sha256:…), and Digest that digest.
	Source string `json:",omitempty"`
	Digest string `json:",omitempty"`
}

// ByReference reports whether the snapshot names its artifact instead of
// holding the files.
func (s *Snapshot) ByReference() bool { return s != nil && s.Source != "" && len(s.Archive) == 0 }

// Origin is what a plan was made from, so that `convoy apply plan.cvp`
// works from any directory without repeating -C or --var: the stack
// directory and every variable value given. Values of sensitive variables
// are stored as given, like the sensitive values in the rendered output.
type Origin struct {
	// Dir is the absolute stack directory.
	Dir string
	// Variables are the variable values given, in order, with their source
	// and sensitivity (--var-file contents, CONVOY_VAR_*, --var, the
	// controller's); not the stack's *.auto.vars.hcl files, which apply
	// reads again (the configuration hash covers them).
	Variables config.RawValues `json:",omitempty"`
	// Clusters are the API servers the plan observed (kube.ClusterID), by
	// cluster block name ("" for the default cluster): apply refuses to
	// run the plan against other clusters.
	Clusters map[string]string `json:",omitempty"`
}

// Encode returns the file's bytes. Equal files encode to equal bytes,
// whose SHA-256 identifies the plan (the controller's plan digest).
func Encode(f *File) ([]byte, error) {
	var buf bytes.Buffer
	if err := EncodeTo(&buf, f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodeTo writes Encode's bytes to w as they are made: a plan of tens of
// MiB (a release's chart and rendering) is not held in memory again.
func EncodeTo(w io.Writer, f *File) error {
	if f == nil || f.Plan == nil {
		return errors.New("encode plan: no plan")
	}
	o := f.Origin
	sensitive := f.Plan.HasSensitive() || (o != nil && len(o.Variables) > 0)
	doc := document{Kind: fileKind, FormatVersion: FormatVersion, SensitiveValues: sensitive, Origin: o, Stack: f.Stack, Plan: f.Plan}
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	// Streamed into the compressor (a json.Encoder holds the whole
	// text first), with the newline json.Encoder ends it with.
	if err := jsonstream.Encode(zw, doc); err != nil {
		return fmt.Errorf("encode plan: %w", err)
	}
	if _, err := zw.Write([]byte("\n")); err != nil {
		return fmt.Errorf("encode plan: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("encode plan: %w", err)
	}
	return nil
}

// Decode reads a file's bytes; name says what they are in errors (a path).
// A file of another format version is refused with a message that says to
// plan again. Numbers in values keep their exact form.
func Decode(b []byte, name string) (*File, error) {
	return DecodeFrom(bytes.NewReader(b), name)
}

// DecodeFrom is Decode of what r reads, decoded as it is read: a plan
// file of tens of MiB is not held in memory besides what it decodes to.
func DecodeFrom(r io.Reader, name string) (*File, error) {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(len(gzipMagic)); !bytes.Equal(head, gzipMagic) {
		b, err := io.ReadAll(io.LimitReader(br, MaxSize+1))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, oldOrNot(b, name)
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("%s is not a convoy plan file: %w", name, err)
	}
	// Decoded as it is decompressed, a field or an element at a time:
	// neither the text nor a decoder's copy of it is held whole.
	lr := &safefile.LimitedReader{R: zr, N: MaxSize}
	dec := json.NewDecoder(lr)
	dec.UseNumber()
	var doc document
	if err := jsonstream.Decode(dec, &doc); err != nil {
		if lr.N < 0 {
			return nil, fmt.Errorf("%s is larger than %d bytes uncompressed: not a plan convoy wrote", name, MaxSize)
		}
		return nil, fmt.Errorf("%s is not a convoy plan file: %w", name, err)
	}
	// The rest read (the newline), so that gzip checks the whole.
	if _, err := io.Copy(io.Discard, lr); err != nil {
		return nil, fmt.Errorf("%s is not a convoy plan file: %w", name, err)
	}
	if doc.Kind != fileKind {
		return nil, fmt.Errorf("%s is not a convoy plan file", name)
	}
	if doc.FormatVersion < oldestReadable || doc.FormatVersion > FormatVersion {
		return nil, versionError(name, doc.FormatVersion)
	}
	if s := doc.Stack; s != nil && len(s.Archive) == 0 && (s.Source == "" || s.Digest == "") {
		return nil, fmt.Errorf("%s names no stack snapshot: neither the files nor the artifact's digest", name)
	}
	if doc.Plan == nil || doc.Plan.FormatVersion != plan.FormatVersion {
		return nil, fmt.Errorf("%s holds no plan this convoy reads: run convoy plan again", name)
	}
	if doc.FormatVersion < typedObservations {
		upgradeObservations(doc.Plan)
	}
	return &File{Plan: doc.Plan, Origin: doc.Origin, Stack: doc.Stack}, nil
}

// upgradeObservations types the observations of a plan file written
// before they had a kind.
func upgradeObservations(p *plan.Plan) {
	for _, rc := range p.Releases {
		if rc == nil {
			continue
		}
		for i := range rc.Observed.Objects {
			rc.Observed.Objects[i].UpgradeLegacy()
		}
	}
}

// oldOrNot explains bytes that are not a compressed plan: a plan file of
// an older convoy (JSON), or not a plan at all.
func oldOrNot(b []byte, name string) error {
	var head struct {
		Kind          string
		FormatVersion int
	}
	if json.NewDecoder(bytes.NewReader(b)).Decode(&head) == nil && head.Kind == fileKind {
		return versionError(name, head.FormatVersion)
	}
	return fmt.Errorf("%s is not a convoy plan file", name)
}

func versionError(name string, v int) error {
	return fmt.Errorf("%s is a plan file of format version %d; this convoy reads version %d: run convoy plan again", name, v, FormatVersion)
}
