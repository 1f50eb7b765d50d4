package release

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart"
)

// payloadInputs are JSON-like, repetitive and incompressible inputs around
// the sizes that matter: small records, a DEFLATE block (64 KiB), and the
// 1 MiB a Secret holds.
func payloadInputs(t *testing.T) map[string][]byte {
	t.Helper()
	random := func(n int) []byte {
		b := make([]byte, n)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	return map[string][]byte{
		"empty":                 {},
		"small JSON":            []byte(`{"name":"web","namespace":"shop","version":1,"config":{"replicas":2}}`),
		"zeros, 900 KiB":        make([]byte, 900<<10),
		"random, 1 byte":        random(1),
		"random, 64 KiB":        random(64 << 10),
		"random, 64 KiB + 1":    random(64<<10 + 1),
		"random, 1.2 MiB":       random(1200 << 10),
		"random base64, 700 KB": []byte(base64.StdEncoding.EncodeToString(random(525 << 10))),
		"random JSON strings":   []byte(`{"files":"` + strings.Repeat(base64.StdEncoding.EncodeToString(random(3<<10)), 40) + `"}`),
	}
}

// TestMaxPayloadSizeBoundsTheEncoding: CheckRecordSize skips compressing a
// record whose JSON is under the bound, so no input, however
// incompressible, may encode to more than maxPayloadSize says.
func TestMaxPayloadSizeBoundsTheEncoding(t *testing.T) {
	for name, b := range payloadInputs(t) {
		t.Run(name, func(t *testing.T) {
			p, err := encodePayload(b)
			if err != nil {
				t.Fatal(err)
			}
			if bound := maxPayloadSize(len(b)); len(p) > bound {
				t.Fatalf("%d bytes encode to %d, more than the bound %d", len(b), len(p), bound)
			}
		})
	}
}

// TestEncodePayloadWithReusedWriters: writers taken from the pool, by
// concurrent encodes of different inputs, give what a new writer at
// Helm's level gives, and it decodes back to the input.
func TestEncodePayloadWithReusedWriters(t *testing.T) {
	inputs := payloadInputs(t)
	want := map[string]string{}
	for name, b := range inputs {
		var buf bytes.Buffer
		w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		want[name] = base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(inputs))
	for range 4 {
		for name, b := range inputs {
			wg.Go(func() {
				got, err := encodePayload(b)
				switch {
				case err != nil:
					errs <- err
				case got != want[name]:
					errs <- fmt.Errorf("%s: a reused writer encodes differently from a new one", name)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for name, b := range inputs {
		raw, err := base64.StdEncoding.DecodeString(want[name])
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%s: does not decode back (%v)", name, err)
		}
	}
}

// TestEncodeIsHelmsPayload: a record is base64(gzip(json.Marshal)) at
// Helm's level, whatever it holds (a chart's files, a long manifest with
// what JSON escapes), encodedSize is its length and jsonSize its JSON's.
func TestEncodeIsHelmsPayload(t *testing.T) {
	blob := make([]byte, 300<<10)
	if _, err := rand.Read(blob); err != nil {
		t.Fatal(err)
	}
	manifest := strings.Repeat("---\n# Source: big/templates/a.yaml\ndata:\n  x: \"<&>\u2028é\"\n  blob: "+base64.StdEncoding.EncodeToString(blob[:100<<10])+"\n", 8)
	r := &Release{
		Name: "big", Namespace: "shop", Version: 3, Manifest: manifest,
		Info:   &Info{Status: StatusDeployed, Description: "Install complete"},
		Chart:  &chart.Chart{Metadata: &chart.Metadata{Name: "big", Version: "0.1.0"}, Files: []*chart.File{{Name: "blobs/a", Data: blob}, {Name: "empty"}}, Values: map[string]any{"rev": 1}},
		Config: map[string]any{"rev": 2, "s": "<x>"},
		Hooks:  []*Hook{{Name: "h", Kind: "Job", Manifest: "kind: Job", Events: []chart.HookEvent{chart.HookPreInstall}}},
		Labels: map[string]string{"a": "b"},
	}
	if small(r) {
		t.Fatal("the record is encoded in one buffer, not streamed: make it larger")
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want, err := encodePayload(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := encode(r)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("encode differs from base64(gzip(json.Marshal)): %d and %d bytes", len(got), len(want))
	}
	if n, err := encodedSize(r); err != nil || n != len(want) {
		t.Fatalf("encodedSize %d (%v), want %d", n, err, len(want))
	}
	if n, err := jsonSize(r); err != nil || n != len(b) {
		t.Fatalf("jsonSize %d (%v), want %d", n, err, len(b))
	}
}

// TestDecodeLargePayload: a payload of a MiB or more is decoded as a
// stream (decodeStream) into the release json.Unmarshal makes of its JSON,
// with or without gzip; a payload with data after the release, or that
// does not inflate, is refused as json.Unmarshal and gzip refuse it.
func TestDecodeLargePayload(t *testing.T) {
	blob := make([]byte, 900<<10)
	if _, err := rand.Read(blob); err != nil {
		t.Fatal(err)
	}
	manifest := strings.Repeat("---\n# Source: big/templates/a.yaml\ndata:\n  x: \"<&>\u2028é\"\n  blob: "+base64.StdEncoding.EncodeToString(blob[:200<<10])+"\n", 4)
	r := &Release{
		Name: "big", Namespace: "shop", Version: 3, Manifest: manifest,
		Info:   &Info{Status: StatusDeployed, Description: "Install complete"},
		Chart:  &chart.Chart{Metadata: &chart.Metadata{Name: "big", Version: "0.1.0"}, Templates: []*chart.File{{Name: "templates/a.yaml", Data: blob}}, Values: map[string]any{"rev": 1.5, "list": []any{"a", nil, true}}},
		Config: map[string]any{"rev": 2, "s": "<x>", "nested": map[string]any{"n": 1e300}},
		Hooks:  []*Hook{{Name: "h", Kind: "Job", Manifest: "kind: Job", Events: []chart.HookEvent{chart.HookPreInstall}, LastRun: HookExecution{Phase: "Succeeded"}}},
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	zipped, err := encodePayload(b)
	if err != nil {
		t.Fatal(err)
	}
	plain := base64.StdEncoding.EncodeToString(b)
	for name, payload := range map[string]string{"gzip": zipped, "plain JSON": plain} {
		if len(payload) < streamedOver {
			t.Fatalf("%s: a payload of %d bytes is not streamed: make it larger", name, len(payload))
		}
		var want Release
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		got, err := decode(payload)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(&want)
		if !bytes.Equal(gb, wb) {
			t.Fatalf("%s: the streamed decode differs from json.Unmarshal's", name)
		}
	}
	trailing := base64.StdEncoding.EncodeToString(append(append([]byte{}, b...), []byte(` {"name":"x"}`)...))
	if _, err := decode(trailing); err == nil {
		t.Fatal("a payload with a second value after the release decodes")
	}
	if _, err := decode(zipped[:len(zipped)-8]); err == nil {
		t.Fatal("a truncated gzip payload decodes")
	}
}
