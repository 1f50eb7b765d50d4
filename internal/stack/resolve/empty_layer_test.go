package resolve

import (
	"reflect"
	"testing"
)

// An empty or blank values layer ("", a file() of an empty file, a layer
// of comments) is an empty layer, as an empty -f file is to Helm.
func TestEmptyValuesLayerIsEmpty(t *testing.T) {
	st := evalStack(t, `
release "db" {
  chart  = "./charts/db"
  values = ["", "  \n", "# nothing\n", "a: 1\n", ""]
}
`)
	got, _, err := Values(st.Releases[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"a": float64(1)}; !reflect.DeepEqual(got, want) {
		t.Fatalf("values: %#v", got)
	}
}
