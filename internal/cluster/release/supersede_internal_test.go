package release

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/chart"
)

// largeRecord is a release whose record is streamed (not small), with
// escapes in its strings and a chart file of random bytes.
func largeRecord(t *testing.T) *Release {
	t.Helper()
	blob := make([]byte, 600<<10)
	if _, err := rand.Read(blob); err != nil {
		t.Fatal(err)
	}
	manifest := strings.Repeat("---\n# Source: big/templates/a.yaml\ndata:\n  x: \"<&>\u2028é\"\n  blob: "+base64.StdEncoding.EncodeToString(blob[:100<<10])+"\n", 6)
	first := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	r := &Release{
		Name: "big<&>", Namespace: "shop", Version: 3, Manifest: manifest, ApplyMethod: ApplyMethodSSA,
		Info:   &Info{FirstDeployed: first, LastDeployed: first.Add(time.Hour), Status: StatusDeployed, Description: "Upgrade complete", Notes: "notes <b>"},
		Chart:  &chart.Chart{Metadata: &chart.Metadata{Name: "big", Version: "0.1.0"}, Files: []*chart.File{{Name: "blobs/a", Data: blob}}, Values: map[string]any{"rev": 1}},
		Config: map[string]any{"rev": 2, "s": "<x>"},
		Hooks:  []*Hook{{Name: "h", Kind: "Job", Manifest: "kind: Job", Events: []chart.HookEvent{chart.HookPreInstall}, LastRun: HookExecution{Phase: "Succeeded"}}},
	}
	if small(r) {
		t.Fatal("the record is not large: make it larger")
	}
	return r
}

// decodedJSON is the JSON of the release payload decodes to.
func decodedJSON(t *testing.T, payload string) []byte {
	t.Helper()
	r, err := decode(payload)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWithInfoAsDecoded: rewriting a payload's info gives the payload of
// the release decoded, with that info, encoded again: for a small and a
// large record; payloadInfo reads the info the record holds.
func TestWithInfoAsDecoded(t *testing.T) {
	small := &Release{Name: "web", Namespace: "shop", Version: 1, Manifest: "kind: ConfigMap\n",
		Info: &Info{Status: StatusDeployed, Description: "Install complete"}, Config: map[string]any{"a": "<b>"}}
	for name, r := range map[string]*Release{"small": small, "large": largeRecord(t)} {
		t.Run(name, func(t *testing.T) {
			payload, err := encode(r)
			if err != nil {
				t.Fatal(err)
			}
			info, err := payloadInfo(payload)
			if err != nil {
				t.Fatal(err)
			}
			if ib, rb := mustJSON(t, info), mustJSON(t, r.Info); !bytes.Equal(ib, rb) {
				t.Fatalf("payloadInfo %s, want %s", ib, rb)
			}
			info.Status, info.Description = StatusSuperseded, "Superseded <now>"
			got, err := withInfo(payload, info)
			if err != nil {
				t.Fatal(err)
			}
			want := *r
			want.Info = info
			wantPayload, err := encode(&want)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := decodedJSON(t, got), decodedJSON(t, wantPayload); !bytes.Equal(g, w) {
				t.Fatalf("the rewritten record differs from the record encoded with the new info:\n%.300s\n%.300s", g, w)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWithInfoRefusesOtherPayloads: a payload not as Helm writes it (the
// info first, JSON not compressed) is refused as errNotHelmOrder, to be
// decoded whole; a truncated or corrupt one is refused.
func TestWithInfoRefusesOtherPayloads(t *testing.T) {
	reordered, err := encodePayload([]byte(`{"info":{"status":"deployed"},"name":"web","version":1}`))
	if err != nil {
		t.Fatal(err)
	}
	plain := base64.StdEncoding.EncodeToString([]byte(`{"name":"web","info":{"status":"deployed"},"version":1}`))
	for name, payload := range map[string]string{"info first": reordered, "not compressed": plain} {
		if _, err := withInfo(payload, &Info{Status: StatusSuperseded}); !errors.Is(err, errNotHelmOrder) {
			t.Errorf("%s: %v, want errNotHelmOrder", name, err)
		}
		if _, err := payloadInfo(payload); !errors.Is(err, errNotHelmOrder) {
			t.Errorf("%s: payloadInfo: %v, want errNotHelmOrder", name, err)
		}
	}
	payload, err := encode(largeRecord(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]string{
		"truncated":  payload[:len(payload)-12],
		"corrupt":    payload[:len(payload)/2] + "AAAA" + payload[len(payload)/2+4:],
		"not base64": "!!" + payload,
		"empty":      "",
	} {
		if _, err := withInfo(p, &Info{Status: StatusSuperseded}); err == nil {
			t.Errorf("%s: rewritten", name)
		}
	}
}

// FuzzWithInfo: no payload panics withInfo, and whatever it rewrites
// decodes as the payload did, with the new info.
func FuzzWithInfo(f *testing.F) {
	for _, s := range []string{
		`{"name":"web","info":{"status":"deployed"},"version":1}`,
		`{"name":"web","info":{"status":"deployed"}}`,
		`{"name":"w\u0065b","info":{"status":"deployed","notes":"x"},"manifest":"a: 1\n"} `,
		`{"name":"web","info":{"status":"deployed"},"version":1}{"name":"x"}`,
		`{"name":"web","info":null,"version":1}`,
		`{"name":1,"info":{}}`,
	} {
		p, err := encodePayload([]byte(s))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		info := &Info{Status: StatusSuperseded, Description: "d"}
		got, err := withInfo(payload, info)
		if err != nil {
			return
		}
		before, err := decode(payload)
		if err != nil {
			return // rewritten, not decodable before: nothing to compare
		}
		after, err := decode(got)
		if err != nil {
			t.Fatalf("a decodable payload is rewritten into one that does not decode: %v", err)
		}
		before.Info = info
		if b, a := mustJSON(t, before), mustJSON(t, after); !bytes.Equal(b, a) {
			t.Fatalf("rewritten %s, want %s", a, b)
		}
	})
}

// TestRereadKeepsThePayload: a record p forgot (forgetRecords) is read
// again for its update with only its info decoded; written superseded, it
// holds what it held, in the new status. Written since by another, it is
// refused as changed; a record not as Helm writes it is decoded whole.
func TestRereadKeepsThePayload(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	store := &Storage{Driver: m}
	r := largeRecord(t)
	r.Name = "big"
	r.Labels = map[string]string{"stack": "s"}
	if err := store.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	read, err := store.Get(ctx, "big", 3)
	if err != nil {
		t.Fatal(err)
	}
	p := &Prepared{History: []*Release{read}, Last: read, Deployed: read}
	p.forgetRecords()
	if !p.Deployed.Partial() || p.Deployed.Manifest != "" || p.Deployed.Chart != nil || p.Last != p.Deployed || p.History[0] != p.Deployed {
		t.Fatal("forgetRecords kept the record whole")
	}
	e := &Engine{}
	whole, err := e.reread(ctx, store, p.Deployed)
	if err != nil {
		t.Fatal(err)
	}
	if whole.raw == "" || whole.Chart != nil || whole.Info.Notes != "notes <b>" {
		t.Fatalf("reread decoded the record whole, or not its info: raw %d bytes, notes %q", len(whole.raw), whole.Info.Notes)
	}
	if err := e.writeFinal(ctx, store, whole, StatusSuperseded, "Upgrade complete"); err != nil {
		t.Fatal(err)
	}
	got, err := store.Get(ctx, "big", 3)
	if err != nil {
		t.Fatal(err)
	}
	want := *read
	want.Info = &Info{}
	*want.Info = *read.Info
	want.Info.Status = StatusSuperseded
	if g, w := mustJSON(t, got), mustJSON(t, &want); !bytes.Equal(g, w) {
		t.Fatalf("the superseded record differs from the one read, beyond its status:\n%.300s\n%.300s", g, w)
	}
	if got.Labels["stack"] != "s" || m.records[recordKey("big", 3)].labels["status"] != string(StatusSuperseded) {
		t.Fatalf("labels after the rewrite: %v, %v", got.Labels, m.records[recordKey("big", 3)].labels)
	}

	// p.Deployed was read before that write: refused.
	if _, err := e.reread(ctx, store, p.Deployed); !errors.Is(err, ErrRecordChanged) {
		t.Fatalf("a record written since it was read: %v, want ErrRecordChanged", err)
	}

	// A record helm did not write in its order: decoded whole.
	key := recordKey("big", 3)
	rec := m.records[key]
	b, err := json.Marshal(map[string]any{"info": got.Info, "name": "big", "version": 3, "manifest": "kind: ConfigMap\n"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.payload, err = encodePayload(b); err != nil {
		t.Fatal(err)
	}
	m.records[key] = rec
	header := &Release{Name: "big", Namespace: "shop", Version: 3, Info: &Info{}, resourceVersion: rec.version, partial: true}
	whole, err = e.reread(ctx, store, header)
	if err != nil {
		t.Fatal(err)
	}
	if whole.raw != "" || whole.Manifest != "kind: ConfigMap\n" {
		t.Fatalf("a record in another order was not decoded whole: raw %d bytes, manifest %q", len(whole.raw), whole.Manifest)
	}
}
