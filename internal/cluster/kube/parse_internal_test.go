package kube

import (
	"strings"
	"testing"
)

// A document parsed again is read from what the first parse converted,
// and gives objects of its own: changing the first parse's objects does
// not change the second's. A document that fails fails again, as before.
func TestParseAgainFromDocuments(t *testing.T) {
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: again\n  namespace: ns\ndata:\n  k: v\n"
	first, err := ParseUnmapped(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := documents.get([]byte(manifest)); !ok {
		t.Fatal("the document's JSON was not kept")
	}
	first[0].Object["data"].(map[string]any)["k"] = "changed"
	second, err := ParseUnmapped(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if got := second[0].Object["data"].(map[string]any)["k"]; got != "v" {
		t.Fatalf("the second parse reads k: %v, want v", got)
	}
	bad := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: no\n  labels: [1]\n"
	for i := range 2 {
		if _, err := ParseUnmapped(bad); err == nil {
			t.Fatalf("parse %d of a document whose labels are a list: no error", i+1)
		}
	}
	large := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: large\ndata:\n  k: " + strings.Repeat("x", documentLargest) + "\n"
	if _, err := ParseUnmapped(large); err != nil {
		t.Fatal(err)
	}
	if _, ok := documents.get([]byte(large)); ok {
		t.Fatal("a document over documentLargest was kept")
	}
}

// A stored manifest's document, with helm's "# Source:" line, is the
// rendering's document to the cache; what a comment cannot change (a line
// of the document itself) keeps them apart.
func TestDocumentsWithoutLeadingComments(t *testing.T) {
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: source\n"
	if _, err := ParseUnmapped(doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := documents.get([]byte("# Source: chart/templates/cm.yaml\n\n  # another\n" + doc)); !ok {
		t.Fatal("the document with helm's Source line is not the rendering's")
	}
	if _, ok := documents.get([]byte(doc + "data: {k: v}\n")); ok {
		t.Fatal("another document read as this one")
	}
	if got := string(withoutLeadingComments([]byte("# a\n#b\n"))); got != "" {
		t.Fatalf("only comments: %q", got)
	}
}
