package kube

import (
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/yamldoc"
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
	before := yamldoc.Conversions()
	first[0].Object["data"].(map[string]any)["k"] = "changed"
	// As a stored manifest holds it: with helm's Source line.
	second, err := ParseUnmapped("---\n# Source: chart/templates/cm.yaml\n" + manifest)
	if err != nil {
		t.Fatal(err)
	}
	if after := yamldoc.Conversions(); after != before {
		t.Fatalf("the document was converted again (%d conversions)", after-before)
	}
	if got := second[0].Object["data"].(map[string]any)["k"]; got != "v" {
		t.Fatalf("the second parse reads k: %v, want v", got)
	}
	for _, bad := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: no\n  labels: [1]\n",
		"apiVersion: v1\nmetadata:\n  name: nokind\n",
		"- a\n- b\n",
	} {
		for i := range 2 {
			if _, err := ParseUnmapped(bad); err == nil {
				t.Fatalf("parse %d of %q: no error", i+1, bad)
			}
		}
	}
	large := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: large\ndata:\n  k: " + strings.Repeat("x", 64<<10) + "\n"
	for range 2 {
		if _, err := ParseUnmapped(large); err != nil {
			t.Fatal(err)
		}
	}
}
