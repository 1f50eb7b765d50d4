package release

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/convoy-sh/convoy/internal/safefile"
)

// A large release's upgrade writes its deployed record again, superseded
// (Execute's last steps), and a record is tens of MiB when the release is.
// Decoding it whole to encode it again with another status held the
// decoded record, its JSON and the new payload at once. The record's JSON
// starts as Helm's (and convoy's) encoder writes it: {"name":…,"info":{…},
// then the chart, values and manifests. Rewriting the info alone is read
// through the payload as a stream, the rest copied as it was.

// payloadReader is a Driver that reads a record's payload undecoded, and
// the version it was read at.
type payloadReader interface {
	payload(ctx context.Context, key string) (payload, version string, err error)
}

// reread is r, read whole again when p kept only its metadata
// (forgetRecords), on the condition that nobody wrote it since (as
// updateRecord's condition would refuse it). From a driver that reads
// payloads, a record written as Helm writes it comes back with its info
// decoded and its payload kept (raw): writing it rewrites the info in
// the payload.
func (e *Engine) reread(ctx context.Context, store *Storage, r *Release) (*Release, error) {
	if !r.partial {
		return r, nil
	}
	key := recordKey(r.Name, r.Version)
	failed := func(err error) error {
		return &RecordError{Name: r.Name, Namespace: r.Namespace, Revision: r.Version, Left: r.Info.Status, Want: StatusSuperseded, RunID: r.Labels[RunLabel], Err: err}
	}
	changed := func(now string) error {
		return failed(fmt.Errorf("%w: release %s revision %d was written by another operation since this one read it (read at version %s, now %s)",
			ErrRecordChanged, r.Name, r.Version, r.resourceVersion, now))
	}
	if pr, ok := store.Driver.(payloadReader); ok {
		var payload, version string
		err := Retry(ctx, e.grace, func(ctx context.Context) error {
			var err error
			payload, version, err = pr.payload(ctx, key)
			return err
		})
		if err != nil {
			return nil, failed(err)
		}
		if version != r.resourceVersion {
			return nil, changed(version)
		}
		info, err := payloadInfo(payload)
		if err == nil {
			whole := *r
			whole.partial, whole.Info, whole.raw = false, info, payload
			return &whole, nil
		}
		// Not as Helm writes it: decoded whole below.
	}
	var full *Release
	err := Retry(ctx, e.grace, func(ctx context.Context) error {
		var err error
		full, err = store.Get(ctx, r.Name, r.Version)
		return err
	})
	if err != nil {
		return nil, failed(err)
	}
	if full.resourceVersion != r.resourceVersion {
		return nil, changed(full.resourceVersion)
	}
	return full, nil
}

// errNotHelmOrder: a payload whose JSON does not start with the release's
// name and info (in that order), or is not compressed as Helm compresses
// it.
var errNotHelmOrder = errors.New("the record's payload does not start with its name and info")

// payloadHead opens payload's JSON and reads its name and info; rest is
// the JSON after the info object, up to and with the closing brace.
func payloadHead(payload string) (name string, info *Info, rest io.Reader, err error) {
	br := bufio.NewReader(base64.NewDecoder(base64.StdEncoding, strings.NewReader(payload)))
	if head, _ := br.Peek(len(gzipMagic)); !bytes.Equal(head, gzipMagic) {
		return "", nil, nil, errNotHelmOrder
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return "", nil, nil, fmt.Errorf("decode release payload: %w", err)
	}
	text := &safefile.LimitedReader{R: zr, N: maxRecordSize}
	dec := json.NewDecoder(text)
	want := func(v json.Token) bool {
		t, err := dec.Token()
		return err == nil && t == v
	}
	if !want(json.Delim('{')) || !want("name") {
		return "", nil, nil, errNotHelmOrder
	}
	t, err := dec.Token()
	name, ok := t.(string)
	if err != nil || !ok || !want("info") {
		return "", nil, nil, errNotHelmOrder
	}
	info = &Info{}
	if err := dec.Decode(info); err != nil {
		return "", nil, nil, errNotHelmOrder
	}
	return name, info, io.MultiReader(dec.Buffered(), text), nil
}

// payloadInfo is the info of a payload written as Helm writes it.
func payloadInfo(payload string) (*Info, error) {
	_, info, _, err := payloadHead(payload)
	return info, err
}

// withInfo is payload with its info replaced by info's: the name and
// everything after the info are the payload's own (copied, not decoded).
func withInfo(payload string, info *Info) (string, error) {
	name, _, rest, err := payloadHead(payload)
	if err != nil {
		return "", err
	}
	nameJSON, err := json.Marshal(name)
	if err != nil {
		return "", err
	}
	infoJSON, err := json.Marshal(info)
	if err != nil {
		return "", err
	}
	return compressed(func(zw io.Writer) error {
		for _, b := range [][]byte{[]byte(`{"name":`), nameJSON, []byte(`,"info":`), infoJSON} {
			if _, err := zw.Write(b); err != nil {
				return err
			}
		}
		// Read to its end, which checks the gzip stream's checksum.
		if _, err := io.Copy(zw, rest); err != nil {
			if errors.Is(err, safefile.ErrTooLarge) {
				return fmt.Errorf("decode release payload: larger than %d bytes uncompressed", maxRecordSize)
			}
			return fmt.Errorf("decode release payload: %w", err)
		}
		return nil
	})
}
