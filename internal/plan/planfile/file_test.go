package planfile

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/convoy-sh/convoy/internal/config"
	"github.com/convoy-sh/convoy/internal/plan/plantest"
	"github.com/convoy-sh/convoy/internal/plan/view"
)

func TestPlanFileRoundTrip(t *testing.T) {
	p := plantest.Sample()
	path := filepath.Join(t.TempDir(), "p.cvp")
	if err := Write(path, p); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := view.JSON(&a, p); err != nil {
		t.Fatal(err)
	}
	if err := view.JSON(&b, got); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() || !slices.Equal(got.Releases[0].Sensitive, []string{"hunter2-canary"}) {
		t.Fatalf("round trip differs:\n%s\n%s", a.String(), b.String())
	}
	if _, err := readPlanBytes([]byte(`{"Kind":"convoy-plan","FormatVersion":99,"Plan":{"FormatVersion":99}}`)); err == nil {
		t.Fatal("a plan of another format version was read")
	}
	if _, err := readPlanBytes([]byte(`{}`)); err == nil {
		t.Fatal("a non-plan was read")
	}
}

// TestOriginRoundTrip: the variable values a plan was made with come back
// with their source and sensitivity, and make the file sensitive.
func TestOriginRoundTrip(t *testing.T) {
	p := plantest.Sample()
	secret := config.VariableValue(config.ValueFromCaller, "Secret shop/creds", "token", "s3cr3t")
	secret.Sensitive = true
	origin := &Origin{Dir: "/stacks/shop", Variables: config.RawValues{
		config.VariablesFile(config.ValueFromNamedFile, "/dev/fd/63", []byte("replicas = 3\n")),
		config.VariableValue(config.ValueFromEnvVar, "CONVOY_VAR_region", "region", "eu"),
		config.VariableValue(config.ValueFromCLIArg, "--var", "replicas", "4"),
		secret,
	}}
	path := filepath.Join(t.TempDir(), "p.cvp")
	if err := Save(path, &File{Plan: p, Origin: origin}); err != nil {
		t.Fatal(err)
	}
	got, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Origin, origin) {
		t.Fatalf("origin:\n%+v\nwant\n%+v", got.Origin, origin)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"SensitiveValues":true`)) {
		t.Error("a file with variable values is not marked sensitive")
	}
}
