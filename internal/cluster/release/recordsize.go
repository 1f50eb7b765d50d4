package release

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Record sizes (issues 40, 51): a release's record holds its chart, values,
// manifest and hooks, gzipped and base64-encoded. Each storage driver holds
// records up to a size: Secrets and ConfigMaps MaxRecordBytes, helm's SQL
// table MaxSQLRecord. Plans size the record each release would write and
// refuse one its driver cannot hold, before anything is applied; Execute
// checks again.

// MaxSQLRecord is the largest payload helm's releases_v1.body (TEXT)
// holds: PostgreSQL's limit on a field (1 GB).
const MaxSQLRecord = 1<<30 - 1

// RecordLimit is the largest payload driver d holds.
func RecordLimit(d StorageDriver) int {
	if d == DriverSQL {
		return MaxSQLRecord
	}
	return MaxRecordBytes
}

// RecordSize is the size of the record a revision would write.
type RecordSize struct {
	// Bytes is the payload's size: base64(gzip(JSON)), as stored.
	Bytes int
	// Limit is what the engine's driver holds.
	Limit int
}

// RecordPart is a part of a release record and its size before
// compression.
type RecordPart struct {
	Name  string
	Bytes int
}

// RecordTooLargeError is a revision whose record its storage driver would
// refuse.
type RecordTooLargeError struct {
	Namespace, Name string
	Revision        int
	// Size is the encoded record's size (base64 of gzip of JSON), Limit
	// what the driver holds (RecordLimit); Driver its name.
	Size, Limit int
	Driver      string
	// Heaviest are the parts of the release that weigh most, heaviest
	// first (at most three), before compression.
	Heaviest []RecordPart
}

func (e *RecordTooLargeError) Error() string {
	holder := "a Secret"
	switch e.Driver {
	case "configmap":
		holder = "a ConfigMap"
	case "sql":
		holder = "a row of helm's SQL table"
	}
	msg := fmt.Sprintf("release %s revision %d in namespace %s: the release record would be %d bytes (%s), more than the %d bytes (%s) %s holds (it stores the whole chart, its files included, and the values)",
		e.Name, e.Revision, e.Namespace, e.Size, FormatBytes(e.Size), e.Limit, FormatBytes(e.Limit), holder)
	if e.Driver != "sql" {
		msg += `: keep the stack's records in PostgreSQL (stack { storage { driver = "sql" } }, docs/storage.md)`
	}
	if len(e.Heaviest) > 0 {
		heavy := make([]string, len(e.Heaviest))
		for i, p := range e.Heaviest {
			heavy[i] = fmt.Sprintf("%s (%s)", p.Name, FormatBytes(p.Bytes))
		}
		msg += ", or make the chart or its values smaller: its heaviest parts are " + strings.Join(heavy, ", ")
	}
	return msg
}

// finalRecord is the record of the revision p prepares as it ends, as
// sized: its times are sizedAt.
func (p *Prepared) finalRecord() *Release {
	rel := p.record(sizedAt)
	rel.Info.FirstDeployed, rel.Info.LastDeployed = sizedAt, sizedAt
	rel.Info.Status, rel.Info.Description = StatusDeployed, "Upgrade complete"
	return rel
}

// sizedAt is the time a sized record carries: a time prints with as many
// digits as its nanoseconds need, and the first revision's time comes from
// the history as read (whole, or its metadata), so with the real times two
// plans of one revision (an incremental and a full one) would give sizes
// a few bytes apart. With every digit printed, it is the longest.
var sizedAt = time.Date(2099, 12, 31, 23, 59, 59, 999999999, time.UTC)

// RecordSize is the encoded size of the record p's revision writes (as it
// ends, deployed) and what the engine's driver holds.
func (e *Renderer) RecordSize(p *Prepared) (RecordSize, error) {
	rel := p.finalRecord()
	n, err := encodedSize(rel)
	if err != nil {
		return RecordSize{}, fmt.Errorf("encode release %s: %w", rel.Name, err)
	}
	return RecordSize{Bytes: n, Limit: RecordLimit(e.driver)}, nil
}

// CheckRecordSize fails with a *RecordTooLargeError when the engine's
// driver could not store the record this revision would write. A record
// whose JSON is small enough that no compression could make it too large
// (maxPayloadSize) is not compressed: the check is then a JSON encoding,
// and the only compressions left are the record writes'.
func (e *Renderer) CheckRecordSize(p *Prepared) error {
	rel := p.finalRecord()
	limit := RecordLimit(e.driver)
	size, err := jsonSize(rel)
	if err != nil {
		return fmt.Errorf("encode release %s: %w", rel.Name, err)
	}
	if maxPayloadSize(size) <= limit {
		return nil
	}
	n, err := encodedSize(rel)
	if err != nil {
		return fmt.Errorf("encode release %s: %w", rel.Name, err)
	}
	return e.tooLarge(p, RecordSize{Bytes: n, Limit: limit})
}

// CheckSize is CheckRecordSize of a size computed already (RecordSize).
func (e *Renderer) CheckSize(p *Prepared, size RecordSize) error {
	return e.tooLarge(p, size)
}

func (e *Renderer) tooLarge(p *Prepared, size RecordSize) error {
	if size.Bytes <= size.Limit {
		return nil
	}
	return &RecordTooLargeError{Namespace: p.Request.Namespace, Name: p.Request.Name, Revision: p.Revision, Size: size.Bytes, Limit: size.Limit,
		Driver: e.driver.String(), Heaviest: heaviestParts(p)}
}

// heaviestParts are the three largest of the rendered manifests (by
// template), the chart's files and the values, before compression.
func heaviestParts(p *Prepared) []RecordPart {
	var parts []RecordPart
	byTemplate := map[string]int{}
	for _, m := range p.Rendered.Manifests {
		byTemplate[m.Path] += len(m.Content)
	}
	for name, n := range byTemplate {
		parts = append(parts, RecordPart{Name: "the rendered " + name, Bytes: n})
	}
	if ch := p.Rendered.Chart; ch != nil {
		for _, f := range slices.Concat(ch.Templates, ch.Files) {
			parts = append(parts, RecordPart{Name: "the chart's " + f.Name, Bytes: len(f.Data)})
		}
	}
	if b, err := json.Marshal(p.Request.Values); err == nil && len(b) > 2 {
		parts = append(parts, RecordPart{Name: "the values", Bytes: len(b)})
	}
	slices.SortFunc(parts, func(a, b RecordPart) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.Name, b.Name))
	})
	return parts[:min(3, len(parts))]
}

// FormatBytes is n in B, KiB or MiB, one decimal.
func FormatBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
