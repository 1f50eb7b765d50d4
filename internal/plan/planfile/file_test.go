package planfile

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/plantest"
	"github.com/convoy-sh/convoy/internal/plan/view"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

func TestPlanFileRoundTrip(t *testing.T) {
	p := plantest.Sample()
	in := &File{Plan: p, Origin: &Origin{Dir: "/stacks/shop", Variables: config.RawValues{config.VariableValue(config.ValueFromCLIArg, "--var", "a", "1")}}, Stack: &Snapshot{Archive: []byte("tgz"), StackPath: "."}}
	b, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Encode(in)
	if err != nil || !bytes.Equal(b, again) {
		t.Fatalf("encoding one file twice gave other bytes (err %v)", err)
	}
	got, err := Decode(b, "p.cvp")
	if err != nil {
		t.Fatal(err)
	}
	var x, y bytes.Buffer
	if err := view.JSON(&x, p); err != nil {
		t.Fatal(err)
	}
	if err := view.JSON(&y, got.Plan); err != nil {
		t.Fatal(err)
	}
	if x.String() != y.String() || !slices.Equal(got.Plan.Releases[0].Sensitive, []string{"hunter2-canary"}) {
		t.Fatalf("round trip differs:\n%s\n%s", x.String(), y.String())
	}
	if got.Origin.Dir != "/stacks/shop" || len(got.Origin.Variables) != 1 || got.Origin.Variables[0].Text != "1" || string(got.Stack.Archive) != "tgz" {
		t.Fatalf("origin or snapshot lost: %+v %+v", got.Origin, got.Stack)
	}
	if got.Plan.Releases[4].Addr != p.Releases[4].Addr || !got.Plan.Releases[4].Addr.IsRemoved() {
		t.Fatalf("a removed release's address did not survive: %v", got.Plan.Releases[4].Addr)
	}
}

func TestDecodeRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		in   []byte
		want string
	}{
		"an older convoy's plan":   {[]byte(`{"Kind":"convoy-plan","FormatVersion":3,"Plan":{"FormatVersion":1}}`), "format version 3; this convoy reads version 6: run convoy plan again"},
		"a newer format":           {gz(t, `{"Kind":"convoy-plan","FormatVersion":99,"Plan":{"FormatVersion":1}}`), "format version 99"},
		"JSON that is no plan":     {[]byte(`{}`), "is not a convoy plan file"},
		"compressed, not a plan":   {gz(t, `{"Kind":"other"}`), "is not a convoy plan file"},
		"compressed garbage":       {append([]byte{0x1f, 0x8b}, "garbage"...), "is not a convoy plan file"},
		"empty":                    {nil, "is not a convoy plan file"},
		"a plan of another --json": {gz(t, `{"Kind":"convoy-plan","FormatVersion":4,"Plan":{"FormatVersion":7}}`), "run convoy plan again"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(tc.in, "p.cvp")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "p.cvp") {
				t.Fatalf("got %v, want an error naming p.cvp and saying %q", err, tc.want)
			}
		})
	}
}

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The variable values a plan was made with come back with their source and
// sensitivity, and make the file sensitive.
func TestOriginRoundTrip(t *testing.T) {
	secret := config.VariableValue(config.ValueFromCaller, "Secret shop/creds", "token", "s3cr3t")
	secret.Sensitive = true
	origin := &Origin{Dir: "/stacks/shop", Variables: config.RawValues{
		config.VariablesFile(config.ValueFromNamedFile, "/dev/fd/63", []byte("replicas = 3\n")),
		config.VariableValue(config.ValueFromEnvVar, "CONVOY_VAR_region", "region", "eu"),
		config.VariableValue(config.ValueFromCLIArg, "--var", "replicas", "4"),
		secret,
	}}
	b, err := Encode(&File{Plan: plantest.Sample(), Origin: origin})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b, "p.cvp")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Origin, origin) {
		t.Fatalf("origin:\n%+v\nwant\n%+v", got.Origin, origin)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte(`"SensitiveValues":true`)) {
		t.Error("a file with variable values is not marked sensitive")
	}
}

// A plan of a stack pulled from a registry names the artifact by digest
// instead of holding its files; a version 4 file (files embedded) is
// still read; a snapshot that names neither is refused.
func TestSnapshotByReference(t *testing.T) {
	const src, digest = "oci://registry.example/stacks/shop@sha256:aa", "sha256:aa"
	b, err := Encode(&File{Plan: plantest.Sample(), Origin: &Origin{Dir: "/cache/stacks/sha256-aa/tree"}, Stack: &Snapshot{StackPath: ".", Source: src, Digest: digest}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b, "p.cvp")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Stack.ByReference() || got.Stack.Source != src || got.Stack.Digest != digest || len(got.Stack.Archive) != 0 {
		t.Fatalf("snapshot %+v", got.Stack)
	}
	v4 := gz(t, `{"Kind":"convoy-plan","FormatVersion":4,"Stack":{"Archive":"dGd6","StackPath":"."},"Plan":{"FormatVersion":`+planVersion(t)+`}}`)
	if got, err := Decode(v4, "old.cvp"); err != nil || string(got.Stack.Archive) != "tgz" || got.Stack.ByReference() {
		t.Fatalf("version 4: %+v, %v", got, err)
	}
	none := gz(t, `{"Kind":"convoy-plan","FormatVersion":5,"Stack":{"StackPath":"."},"Plan":{"FormatVersion":`+planVersion(t)+`}}`)
	if _, err := Decode(none, "none.cvp"); err == nil || !strings.Contains(err.Error(), "none.cvp names no stack snapshot") {
		t.Fatalf("a snapshot of nothing: %v", err)
	}
}

func planVersion(t *testing.T) string {
	t.Helper()
	return strconv.Itoa(plan.FormatVersion)
}

// TestEncodeIsEncodingJSON: the file, streamed, holds the bytes
// json.Encoder writes of it, and decodes as encoding/json decodes them.
func TestEncodeIsEncodingJSON(t *testing.T) {
	p := plantest.Sample()
	in := &File{Plan: p, Origin: &Origin{Dir: "/stacks/shop"}, Stack: &Snapshot{Archive: []byte("tgz"), StackPath: "."}}
	b, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	doc := document{Kind: fileKind, FormatVersion: FormatVersion, SensitiveValues: true, Origin: in.Origin, Stack: in.Stack, Plan: p}
	if err := json.NewEncoder(&want).Encode(doc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("the file is not encoding/json's:\n%.2000s\n%.2000s", got, want.Bytes())
	}
	dec := json.NewDecoder(bytes.NewReader(got))
	dec.UseNumber()
	var old document
	if err := dec.Decode(&old); err != nil {
		t.Fatal(err)
	}
	decoded, err := Decode(b, "p.cvp")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decoded.Plan, old.Plan) {
		t.Fatal("the plan decoded differs from encoding/json's decoding")
	}
}
