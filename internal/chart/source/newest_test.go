package source_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source"
)

func TestNewestVersions(t *testing.T) {
	published := func(vs ...string) []source.ChartVersion {
		var out []source.ChartVersion
		for _, v := range vs {
			out = append(out, source.ChartVersion{Version: v})
		}
		return out
	}
	repo := published("1.2.0", "1.2.3", "1.3.0", "1.4.1", "2.0.0", "2.1.0", "3.0.0-rc.1",
		"latest", "main", "nightly-2024-05-01", "20240501", "v2.2.0", "0.9")
	for _, tc := range []struct {
		constraint, locked string
		want               source.Newest
	}{
		{"^1.2.0", "1.2.0", source.Newest{Wanted: "1.4.1", Patch: "1.2.3", Minor: "1.4.1", Major: "v2.2.0"}},
		{"~1.2.0", "1.2.0", source.Newest{Wanted: "1.2.3", Patch: "1.2.3", Minor: "1.4.1", Major: "v2.2.0"}},
		{"1.3.0", "1.3.0", source.Newest{Wanted: "1.3.0", Patch: "1.3.0", Minor: "1.4.1", Major: "v2.2.0"}},
		{"", "2.0.0", source.Newest{Wanted: "v2.2.0", Patch: "2.0.0", Minor: "v2.2.0", Major: "v2.2.0"}},
		// A constraint naming a pre-release makes pre-releases candidates.
		{">=3.0.0-0", "3.0.0-rc.1", source.Newest{Wanted: "3.0.0-rc.1", Patch: "3.0.0-rc.1", Minor: "3.0.0-rc.1", Major: "3.0.0-rc.1"}},
		// Nothing locked yet: relative to what the constraint admits.
		{"^2.0.0", "", source.Newest{Wanted: "v2.2.0", Patch: "v2.2.0", Minor: "v2.2.0", Major: "v2.2.0"}},
		{"^9.0.0", "", source.Newest{Major: "v2.2.0"}},
	} {
		t.Run(fmt.Sprintf("%s@%s", tc.constraint, tc.locked), func(t *testing.T) {
			got, err := source.NewestVersions(tc.constraint, tc.locked, repo)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, err := source.NewestVersions(">>1", "", repo); err == nil {
		t.Error("an invalid constraint is not an error")
	}
}

func TestBumpConstraint(t *testing.T) {
	for _, tc := range []struct{ constraint, target, want, err string }{
		{"1.2.0", "2.1.0", "2.1.0", ""},
		{"=1.2.0", "2.1.0", "=2.1.0", ""},
		{"v1.2.0", "2.1.0", "v2.1.0", ""},
		{"^1.2.0", "2.1.0", "^2.1.0", ""},
		{"^1.2.0", "1.4.0", "^1.2.0", ""}, // admits it already
		{"~1.2.0", "1.3.1", "~1.3.1", ""},
		{"~1.2", "1.3.1", "~1.3", ""},
		{"^1", "2.1.0", "^2", ""},
		{">= 1.0.0", "2.0.0", ">= 1.0.0", ""},
		{"1.2.x", "1.3.4", "1.3.x", ""},
		{"1.x", "2.0.1", "2.x", ""},
		{"", "9.9.9", "", ""},
		{">1.0, <2.0", "2.1.0", "", "range"},
		{"1.x || 2.x", "3.0.0", "", "range"},
		{"<2.0.0", "2.1.0", "", "caps"},
	} {
		t.Run(tc.constraint+"→"+tc.target, func(t *testing.T) {
			got, err := source.BumpConstraint(tc.constraint, tc.target)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
