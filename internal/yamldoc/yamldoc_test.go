package yamldoc

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// A document is converted once: again as it is, with helm's Source line,
// or as a multi-document reader gives a manifest's first document (its
// "---" line kept). Another document is not taken for it.
func TestJSONConvertsADocumentOnce(t *testing.T) {
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: once\n"
	first := mustJSON(t, doc)
	conversions := Conversions()
	for _, again := range []string{doc, "# Source: chart/templates/cm.yaml\n" + doc, "---\n# Source: c/t.yaml\n\n  # more\n" + doc} {
		if got := mustJSON(t, again); !bytes.Equal(got, first) {
			t.Fatalf("%q: %s, want %s", again, got, first)
		}
	}
	if c := Conversions(); c != conversions {
		t.Fatalf("converted %d times again", c-conversions)
	}
	if got := mustJSON(t, doc+"data: {k: v}\n"); bytes.Equal(got, first) {
		t.Fatal("another document read as this one")
	}
	// A second document start ends an empty document: not the same.
	if got := mustJSON(t, "---\n---\n"+doc); string(got) != "null" {
		t.Fatalf("a document after an empty one: %s, want null", got)
	}
	large := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: large\ndata:\n  k: " + strings.Repeat("x", documentLargest) + "\n"
	mustJSON(t, large)
	conversions = Conversions()
	mustJSON(t, large)
	if c := Conversions(); c != conversions+1 {
		t.Fatal("a document over documentLargest was kept")
	}
}

// Checked runs its check once for a document that passes it, and again
// (failing again) for one that does not; a conversion that fails fails
// again.
func TestCheckedChecksOnce(t *testing.T) {
	checks := 0
	ok := func([]byte) error { checks++; return nil }
	doc := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: checked\n")
	for range 3 {
		if _, err := Checked(doc, ok); err != nil {
			t.Fatal(err)
		}
	}
	if checks != 1 {
		t.Fatalf("checked %d times, want 1", checks)
	}
	refused := errors.New("refused")
	fails := 0
	bad := func([]byte) error { fails++; return refused }
	other := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: refused\n")
	for range 2 {
		if _, err := Checked(other, bad); !errors.Is(err, refused) {
			t.Fatalf("err = %v, want the check's", err)
		}
	}
	if fails != 2 {
		t.Fatalf("a failing check ran %d times, want 2", fails)
	}
	for range 2 {
		if _, err := JSON([]byte("a: [1\n")); err == nil {
			t.Fatal("invalid YAML: no error")
		}
	}
}

func mustJSON(t *testing.T, doc string) []byte {
	t.Helper()
	data, err := JSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// JSON is YAMLToJSON, whatever was converted before: every prefix of
// comments and document starts a reader may leave is stripped only where
// it cannot change the document.
func FuzzJSONAsYAMLToJSON(f *testing.F) {
	for _, s := range []string{
		"apiVersion: v1\nkind: A\n",
		"---\n# Source: x\na: 1\n",
		"---\n---\na: 1\n",
		"# c\n---\na: |\n  x\n",
		"  ---\na: 1\n",
		"--- a\n",
		"%YAML 1.1\n---\na: 1\n",
	} {
		f.Add(s, "a: 1\n")
	}
	f.Fuzz(func(t *testing.T, first, second string) {
		for _, doc := range []string{first, second, first} {
			want, wantErr := yaml.YAMLToJSON([]byte(doc))
			got, err := JSON([]byte(doc))
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("%q: err %v, YAMLToJSON's %v", doc, err, wantErr)
			}
			if err == nil && !bytes.Equal(got, bytes.TrimSpace(want)) {
				t.Fatalf("%q: %s, YAMLToJSON's %s", doc, got, want)
			}
		}
	})
}
