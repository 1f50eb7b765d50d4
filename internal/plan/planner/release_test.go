package planner

import (
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
)

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
		{"a null default (Helm 3 printed it, Helm 4 drops it)",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        resources:\n          limits: null\n          requests:\n            cpu: 1m\n",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        resources:\n          requests:\n            cpu: 1m\n", true},
		{"a null in place of a value", cm, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: null\n", false},
		{"a null in a list holds its place", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nx: [null, 1]\n", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\nx: [1]\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameObjects(tc.a, tc.b); got != tc.same {
				t.Fatalf("sameObjects = %v, want %v", got, tc.same)
			}
		})
	}
}

func TestValuesBase(t *testing.T) {
	rec := func(v int, s release.Status) *release.Release {
		return &release.Release{Version: v, Info: &release.Info{Status: s}}
	}
	deployed := rec(1, release.StatusDeployed)
	for _, tc := range []struct {
		name     string
		hist     []*release.Release
		deployed *release.Release
		install  bool
		want     int // revision; 0 for none
	}{
		{"the deployed revision", []*release.Release{deployed, rec(2, release.StatusFailed)}, deployed, false, 1},
		{"none deployed: the last that was", []*release.Release{rec(1, release.StatusSuperseded), rec(2, release.StatusSuperseded), rec(3, release.StatusFailed)}, nil, false, 2},
		{"never deployed: the newest", []*release.Release{rec(1, release.StatusFailed), rec(2, release.StatusFailed)}, nil, false, 2},
		{"an install compares with nothing", []*release.Release{rec(1, release.StatusFailed)}, nil, true, 0},
		{"no history", nil, nil, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := 0
			if b := valuesBase(tc.hist, tc.deployed, tc.install); b != nil {
				got = b.Version
			}
			if got != tc.want {
				t.Fatalf("revision %d, want %d", got, tc.want)
			}
		})
	}
}
