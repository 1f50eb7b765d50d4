package planfile

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"

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
