package release

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/jsonstream"
	"github.com/convoy-sh/convoy/internal/safefile"
)

// Status is a release record's state, with Helm's names.
type Status string

// Helm's release statuses.
const (
	StatusUnknown         Status = "unknown"
	StatusDeployed        Status = "deployed"
	StatusUninstalled     Status = "uninstalled"
	StatusSuperseded      Status = "superseded"
	StatusFailed          Status = "failed"
	StatusUninstalling    Status = "uninstalling"
	StatusPendingInstall  Status = "pending-install"
	StatusPendingUpgrade  Status = "pending-upgrade"
	StatusPendingRollback Status = "pending-rollback"
)

// IsPending reports whether an operation holds the release (or crashed
// while holding it).
func (s Status) IsPending() bool {
	return s == StatusPendingInstall || s == StatusPendingUpgrade || s == StatusPendingRollback || s == StatusUninstalling
}

// ApplyMethodSSA marks records whose resources were applied server-side.
const ApplyMethodSSA = "ssa"

// StackLabel marks a release record with the convoy stack that wrote it.
// The newest record decides which stack owns a release: only that stack
// upgrades or uninstalls it (helm ignores the label).
const StackLabel = "convoy.dev/stack"

// StackNamespaceLabel marks a release record with the namespace of the
// controller's Stack object that wrote it (absent: written by the CLI).
// Disown leaves it: a release let go by a Stack still says whose it was.
const StackNamespaceLabel = "convoy.dev/stack-namespace"

// LetGoLabel marks the records of a release that a stack let go (Disown:
// a removed block with destroy = false, a Stack deleted without prune)
// with that stack: another stack takes it over without adopt = true; a
// release no stack wrote needs it.
const LetGoLabel = "convoy.dev/let-go-by"

// Release is one revision of a release, in Helm's v1 record format: the
// JSON field names (and order) match helm.sh/helm/v4/pkg/release/v1.Release.
type Release struct {
	Name        string         `json:"name,omitempty"`
	Info        *Info          `json:"info,omitempty"`
	Chart       *chart.Chart   `json:"chart,omitempty"`
	Config      map[string]any `json:"config,omitempty"`
	Manifest    string         `json:"manifest,omitempty"`
	Hooks       []*Hook        `json:"hooks,omitempty"`
	Version     int            `json:"version,omitempty"`
	Namespace   string         `json:"namespace,omitempty"`
	ApplyMethod string         `json:"apply_method,omitempty"`

	// Labels are the record object's labels other than the system labels
	// (StackLabel among them)
	// (name, owner, status, version, createdAt, modifiedAt). Not in the
	// payload, as in Helm.
	Labels map[string]string `json:"-"`
	// Annotations are the record object's annotations (ObjectsAnnotation
	// among them). Not in the payload.
	Annotations map[string]string `json:"-"`
	// createdAt is the record's createdAt label, kept across updates.
	createdAt string
	// resourceVersion is the record object's as read or last written:
	// an update is conditional on it (optimistic concurrency), so that
	// what another operation wrote since is never overwritten.
	resourceVersion string
	// partial: read from the record's metadata alone (HistoriesOfMeta).
	partial bool
	// rewritten: another field manager wrote the payload after convoy
	// wrote it with its ObjectsAnnotation (Rewritten).
	rewritten bool
	// objects, when not nil, keeps ObjectsAnnotation decoded
	// (RecordObjectsOf).
	objects *recordObjectsMemo
	// payload, while one write of the record is retried, is its
	// encoding, made once for every attempt (encodeOnce).
	payload string
	// raw is the payload the record was read as, when only its info was
	// decoded (reread): it is encoded as raw with Info's.
	raw string
}

// Info is the release's status block.
type Info struct {
	FirstDeployed    time.Time `json:"first_deployed,omitzero"`
	LastDeployed     time.Time `json:"last_deployed,omitzero"`
	Deleted          time.Time `json:"deleted,omitzero"`
	Description      string    `json:"description,omitempty"`
	Status           Status    `json:"status,omitempty"`
	RollbackRevision int       `json:"rollback_revision,omitempty"`
	Notes            string    `json:"notes,omitempty"`
}

// UnmarshalJSON accepts the empty strings older Helm versions wrote for
// unset times.
func (i *Info) UnmarshalJSON(data []byte) error {
	type plain Info
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	for _, k := range []string{"first_deployed", "last_deployed", "deleted"} {
		if string(raw[k]) == `""` {
			delete(raw, k)
		}
	}
	cleaned, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(cleaned, (*plain)(i))
}

// Hook is a hook as recorded in a release, with its last execution.
type Hook struct {
	Name              string                   `json:"name,omitempty"`
	Kind              string                   `json:"kind,omitempty"`
	Path              string                   `json:"path,omitempty"`
	Manifest          string                   `json:"manifest,omitempty"`
	Events            []chart.HookEvent        `json:"events,omitempty"`
	LastRun           HookExecution            `json:"last_run"`
	Weight            int                      `json:"weight,omitempty"`
	DeletePolicies    []chart.HookDeletePolicy `json:"delete_policies,omitempty"`
	OutputLogPolicies []string                 `json:"output_log_policies,omitempty"`
}

// HookPhase is the outcome of a hook's last run.
type HookPhase string

// Hook phases, as Helm's.
const (
	HookPhaseUnknown   HookPhase = "Unknown"
	HookPhaseRunning   HookPhase = "Running"
	HookPhaseSucceeded HookPhase = "Succeeded"
	HookPhaseFailed    HookPhase = "Failed"
)

// HookExecution records when a hook last ran and how it ended.
type HookExecution struct {
	StartedAt   time.Time `json:"started_at,omitzero"`
	CompletedAt time.Time `json:"completed_at,omitzero"`
	Phase       HookPhase `json:"phase"`
}

// UnmarshalJSON accepts the empty strings older Helm versions wrote.
func (h *HookExecution) UnmarshalJSON(data []byte) error {
	type plain HookExecution
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	for _, k := range []string{"started_at", "completed_at"} {
		if string(raw[k]) == `""` {
			delete(raw, k)
		}
	}
	cleaned, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(cleaned, (*plain)(h))
}

// hooksFromChart converts rendered hooks into record hooks (not yet run).
func hooksFromChart(hs []*chart.Hook) []*Hook {
	out := make([]*Hook, 0, len(hs))
	for _, h := range hs {
		out = append(out, &Hook{
			Name: h.Name, Kind: h.Kind, Path: h.Path, Manifest: h.Manifest,
			Events: h.Events, Weight: h.Weight, DeletePolicies: h.DeletePolicies,
			OutputLogPolicies: h.OutputLogPolicies,
		})
	}
	return out
}

// recordKey is the storage object name: sh.helm.release.v1.NAME.vREVISION.
func recordKey(name string, revision int) string {
	return fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, revision)
}

var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// encode is Helm's payload: base64(gzip(JSON)). For a large record the
// JSON (encoding/json's bytes) is streamed into the compressor, and the
// compressed bytes are kept in pieces until their base64 is written into
// the string's own memory: a record may be tens of MiB, and neither its
// JSON text nor a doubling buffer is held whole.
// A record whose manifests, chart files and values come to less than
// that (nearly all) is encoded by encoding/json in one buffer: streaming
// cost a first apply's record of helm create's chart 29% more CPU and
// three times the allocations, for memory only large records need.
func encode(r *Release) (string, error) {
	if r.raw != "" {
		return withInfo(r.raw, r.Info)
	}
	if small(r) {
		b, err := json.Marshal(r)
		if err != nil {
			return "", err
		}
		return encodePayload(b)
	}
	return compressed(func(zw io.Writer) error { return jsonstream.Encode(zw, r) })
}

// encoded is r's payload: the one encodeOnce made for the write in
// progress, else encoded now.
func (r *Release) encoded() (string, error) {
	if r.payload != "" {
		return r.payload, nil
	}
	return encode(r)
}

// encodeOnce encodes r for one write and its retries, and returns what
// forgets it: each attempt of a write has a few seconds
// (attemptTimeout), and a record of tens of MiB took about as long to
// encode on a busy machine, so that attempts ran out encoding it again.
// When encoding fails, the write's attempts report it.
func encodeOnce(r *Release) (forget func()) {
	p, err := encode(r)
	if err != nil {
		return func() {}
	}
	r.payload = p
	return func() { r.payload = "" }
}

// streamedOver is the size of a record's largest parts from which it is
// encoded as a stream (encode).
const streamedOver = 1 << 20

// small reports whether r's largest parts (its manifests, its chart's
// templates, files, schema and values file) are under streamedOver.
func small(r *Release) bool {
	n := len(r.Manifest) + chartSize(r.Chart)
	for _, h := range r.Hooks {
		if h != nil {
			n += len(h.Manifest)
		}
	}
	return n < streamedOver
}

// encodedSize is len(encode(r)), without keeping the payload.
func encodedSize(r *Release) (int, error) {
	if small(r) {
		p, err := encode(r)
		return len(p), err
	}
	var n counter
	if err := compressJSON(&n, r); err != nil {
		return 0, err
	}
	return base64.StdEncoding.EncodedLen(int(n)), nil
}

// jsonSize is len(json.Marshal(r)), without keeping the text.
func jsonSize(r *Release) (int, error) {
	if small(r) {
		b, err := json.Marshal(r)
		return len(b), err
	}
	var n counter
	if err := jsonstream.Encode(&n, r); err != nil {
		return 0, err
	}
	return int(n), nil
}

// gzipWriters reuses the compressors of encodePayload: a new one allocates
// about 1 MiB of tables, which made allocating them and collecting the
// garbage they left the larger part of convoy's CPU time in a first apply
// of small releases (issue 26). A cache, not state: any writer serves any
// call once Reset.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestCompression) // a valid level: never fails
	return w
}}

// compress writes gzip of what write writes, at Helm's compression level,
// to w.
func compress(w io.Writer, write func(zw io.Writer) error) error {
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(w)
	if err := write(zw); err != nil {
		return err
	}
	return zw.Close()
}

// compressed is base64(gzip(what write writes)), at Helm's compression
// level: the compressed bytes are kept in pieces until their base64 is
// written into the string's own memory.
func compressed(write func(zw io.Writer) error) (string, error) {
	var gz pieces
	if err := compress(&gz, write); err != nil {
		return "", err
	}
	return gz.base64(), nil
}

// compressJSON writes gzip(JSON of v), at Helm's compression level, to w.
func compressJSON(w io.Writer, v any) error {
	return compress(w, func(zw io.Writer) error { return jsonstream.Encode(zw, v) })
}

// encodePayload is base64(gzip(b)), at Helm's compression level.
func encodePayload(b []byte) (string, error) {
	return compressed(func(zw io.Writer) error {
		_, err := zw.Write(b)
		return err
	})
}

// pieces is a buffer that grows by pieces of at most 1 MiB instead of
// copying itself into one twice its size.
type pieces [][]byte

func (p *pieces) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		if len(*p) == 0 || len((*p)[len(*p)-1]) == cap((*p)[len(*p)-1]) {
			size := 1 << 20
			if len(*p) == 0 {
				size = 4 << 10 // most records are small
			} else if last := cap((*p)[len(*p)-1]); last < size {
				size = min(2*last, size)
			}
			*p = append(*p, make([]byte, 0, size))
		}
		last := &(*p)[len(*p)-1]
		k := min(len(b), cap(*last)-len(*last))
		*last = append(*last, b[:k]...)
		b = b[k:]
	}
	return n, nil
}

// base64 is the pieces' base64, written straight into the string's own
// memory (a multiple of 3 bytes at a time until the last). It consumes
// them: each piece is let go once encoded, so that a large record's
// compressed bytes and its payload are not both held whole.
func (p pieces) base64() string {
	n := 0
	for _, b := range p {
		n += len(b)
	}
	var out strings.Builder
	out.Grow(base64.StdEncoding.EncodedLen(n))
	enc := base64.NewEncoder(base64.StdEncoding, &out)
	for i, b := range p {
		_, _ = enc.Write(b) // a strings.Builder does not fail
		p[i] = nil
	}
	_ = enc.Close()
	return out.String()
}

// counter counts the bytes written to it.
type counter int64

func (c *counter) Write(b []byte) (int, error) {
	*c += counter(len(b))
	return len(b), nil
}

// maxPayloadSize bounds the size of encodePayload's result for n bytes of
// JSON without compressing them. DEFLATE's fixed Huffman codes spend at
// most 9 bits on a literal byte and 31 on a match of 4 or more bytes
// (BestCompression's shortest), and compress/flate writes each block in
// the smallest of the stored, fixed and dynamic encodings, so a block
// takes at most 9/8 of its bytes plus its header and end code; n/4 more
// and 1 KiB cover those and gzip's header and trailer with room to spare.
// base64 then takes 4 bytes per 3.
func maxPayloadSize(n int) int {
	gz := n + n/4 + 1024
	return (gz + 2) / 3 * 4
}

// maxRecordSize bounds a decompressed record (Kubernetes objects are at
// most ~1.5 MiB compressed; a record that inflates past this is hostile).
const maxRecordSize = 256 << 20

// payloadJSON is the release JSON of a payload written by Helm or convoy
// (gzip optional, as Helm).
func payloadJSON(data string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, fmt.Errorf("decode release payload: %w", err)
	}
	if len(b) > 3 && bytes.Equal(b[:3], gzipMagic) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("decode release payload: %w", err)
		}
		defer zr.Close()
		b, err = io.ReadAll(io.LimitReader(zr, maxRecordSize+1))
		if err != nil {
			return nil, fmt.Errorf("decode release payload: %w", err)
		}
		if len(b) > maxRecordSize {
			return nil, fmt.Errorf("decode release payload: larger than %d bytes uncompressed", maxRecordSize)
		}
	}
	return b, nil
}

// decode reads a payload written by Helm or convoy (gzip optional, as Helm).
// A payload of streamedOver or more is decoded as it is decompressed
// (decodeStream).
func decode(data string) (*Release, error) {
	if len(data) >= streamedOver {
		return decodeStream(data)
	}
	b, err := payloadJSON(data)
	if err != nil {
		return nil, err
	}
	var r Release
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode release payload: %w", err)
	}
	if r.Info == nil {
		r.Info = &Info{}
	}
	return &r, nil
}

// decodeStream is decode of a large payload, read through base64, gzip and
// the JSON decoder a field or an element at a time (internal/jsonstream):
// neither the compressed bytes nor the release JSON (each about the
// record's size, and the JSON read into a doubling buffer) is held whole
// while the release is built.
func decodeStream(data string) (*Release, error) {
	br := bufio.NewReader(base64.NewDecoder(base64.StdEncoding, strings.NewReader(data)))
	var text io.Reader = br
	if head, _ := br.Peek(len(gzipMagic) + 1); len(head) > len(gzipMagic) && bytes.Equal(head[:len(gzipMagic)], gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("decode release payload: %w", err)
		}
		defer zr.Close()
		text = &safefile.LimitedReader{R: zr, N: maxRecordSize}
	}
	dec := json.NewDecoder(text)
	var r Release
	err := jsonstream.Decode(dec, &r)
	if err == nil {
		// The end, as json.Unmarshal wants it (and gzip's checksum).
		if _, end := dec.Token(); end != io.EOF {
			err = cmp.Or(end, errors.New("data after the release"))
		}
	}
	if err != nil {
		if errors.Is(err, safefile.ErrTooLarge) {
			return nil, fmt.Errorf("decode release payload: larger than %d bytes uncompressed", maxRecordSize)
		}
		return nil, fmt.Errorf("decode release payload: %w", err)
	}
	if r.Info == nil {
		r.Info = &Info{}
	}
	return &r, nil
}
