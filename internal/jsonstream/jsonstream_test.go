package jsonstream_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/jsonstream"
)

type inner struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
}

type embedded struct{ E int }

type withEmbedded struct {
	embedded
	X string
}

// quoted has the string option, which encoding/json encodes alone.
type quoted struct {
	Q int `json:",string"`
}

type stamp struct{ T time.Time }

func (s stamp) MarshalJSON() ([]byte, error) {
	return json.Marshal("at " + s.T.UTC().Format(time.RFC3339))
}
func (s *stamp) UnmarshalJSON(b []byte) error {
	var x string
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimPrefix(x, "at "))
	s.T = t
	return err
}

type outer struct {
	Kind     string
	Count    int               `json:",omitempty"`
	Skipped  string            `json:"-"`
	When     time.Time         `json:"when,omitzero"`
	Values   map[string]any    `json:"values"`
	Files    []*inner          `json:"files"`
	Empty    []*inner          `json:"empty"`
	None     []*inner          `json:"none,omitempty"`
	Next     *outer            `json:",omitempty"`
	Raw      json.RawMessage   `json:",omitempty"`
	Number   json.Number       `json:",omitempty"`
	Stamp    stamp             `json:"stamp"`
	Embedded withEmbedded      `json:"embedded"`
	Labels   map[string]string `json:"labels,omitempty"`
	Big      string
	Quoted   quoted
	private  int
}

func sample() *outer {
	blob := bytes.Repeat([]byte{0, 1, 2, 0xff, 'a'}, 40000)
	// Long strings with what encoding/json escapes, runes across the
	// pieces' boundaries, and invalid UTF-8.
	big := strings.Repeat("<a href=\"x\">&é€😀\u2028\n\t\x01\xff\xe2\x82", 20000)
	return &outer{
		Kind: "k", Skipped: "not written", When: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Values: map[string]any{"b": 1.5, "a": []any{"x", true, nil}, "big": big},
		Files:  []*inner{{Name: "one", Data: blob}, {Name: "two"}, nil, {Name: "three", Data: []byte{}}},
		Empty:  []*inner{},
		Next:   &outer{Kind: "next", Big: big[:70001], Embedded: withEmbedded{embedded{1}, "y"}},
		Raw:    json.RawMessage(`{"z": 1}`), Number: "12.50",
		Stamp: stamp{time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)},
		Big:   big, Quoted: quoted{7}, private: 3,
	}
}

// TestEncodeIsEncodingJSON: Encode writes json.Marshal's bytes.
func TestEncodeIsEncodingJSON(t *testing.T) {
	for _, v := range []any{sample(), *sample(), nil, []string{"a"}, map[string]int{"x": 1}, strings.Repeat("é", 100000)} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := jsonstream.Encode(&got, v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			i := 0
			for i < min(got.Len(), len(want)) && got.Bytes()[i] == want[i] {
				i++
			}
			t.Fatalf("%T: differs from encoding/json at byte %d of %d:\n got %.200q\nwant %.200q", v, i, len(want), got.Bytes()[i:], want[i:])
		}
	}
}

// maxWrite records the largest write.
type maxWrite struct{ max int }

func (w *maxWrite) Write(b []byte) (int, error) {
	w.max = max(w.max, len(b))
	return len(b), nil
}

// TestEncodeWritesInPieces: a struct's long strings and byte slices are
// not written whole, only what encoding/json encodes (a map) is.
func TestEncodeWritesInPieces(t *testing.T) {
	v := sample()
	v.Values = nil
	var w maxWrite
	if err := jsonstream.Encode(&w, v); err != nil {
		t.Fatal(err)
	}
	if w.max > 256<<10 { // a piece escaped: up to 6 bytes a byte
		t.Fatalf("a write of %d bytes", w.max)
	}
}

// TestDecodeIsEncodingJSON: Decode reads what dec.Decode reads, numbers
// kept with UseNumber, unknown fields ignored.
func TestDecodeIsEncodingJSON(t *testing.T) {
	b, err := json.Marshal(sample())
	if err != nil {
		t.Fatal(err)
	}
	b = append([]byte(`{"unknown": {"deep": [1, 2]}, "KIND": "upper", `), b[1:]...)
	read := func(decode func(*json.Decoder, *outer) error) *outer {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var o outer
		if err := decode(dec, &o); err != nil {
			t.Fatal(err)
		}
		return &o
	}
	want := read(func(d *json.Decoder, o *outer) error { return d.Decode(o) })
	got := read(func(d *json.Decoder, o *outer) error { return jsonstream.Decode(d, o) })
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode differs from encoding/json:\n got %+v\nwant %+v", got, want)
	}
	if _, ok := got.Values["b"].(json.Number); !ok || got.Empty == nil || got.None != nil || got.Files[2] != nil {
		t.Fatalf("numbers, empty and nil slices, nil elements not kept: %#v %#v %#v %#v", got.Values["b"], got.Empty, got.None, got.Files[2])
	}
}
