package planner

import "testing"

func TestSameObjects(t *testing.T) {
	const cm = "---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: \"v\"\n"
	for _, tc := range []struct {
		name string
		a, b string
		same bool
	}{
		{"identical", cm, cm, true},
		{"trailing blank lines (Helm 3 trims them)", cm + "  \n\n", cm, true},
		{"comments and quoting", cm, "---\n# Source: c/templates/other.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  k: v\n", true},
		{"a value", cm, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: w\n", false},
		{"kept trailing newlines of a block scalar", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: |+\n    v\n\n", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: |+\n    v\n", false},
		{"order", cm + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n", "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n" + cm, false},
		{"one more object", cm, cm + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n", false},
		{"unparsable", cm, cm + "---\n: [\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameObjects(tc.a, tc.b); got != tc.same {
				t.Fatalf("sameObjects = %v, want %v", got, tc.same)
			}
		})
	}
}
