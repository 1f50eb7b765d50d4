package planner

import (
	"reflect"
	"testing"

	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/sensitive"
)

func TestShiftKeepsTheShape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"canary-7f3a9c2e", "dbobsz-8a4b0d3f"},
		{"ZZ9z", "GG0g"},
		{"AbF=", "BcA="},
		{"--", "--"},
	} {
		if got := shift(tc.in); got != tc.want {
			t.Errorf("shift(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPlaceholdersReplaceEverySensitiveInput(t *testing.T) {
	red := sensitive.New([]string{"s3cret-pw", "8080", "ab"})
	in := map[string]any{
		"password": "s3cret-pw",
		"dsn":      "postgres://app:s3cret-pw@db",
		"port":     int64(8080),
		"short":    "ab",
		"list":     []any{"s3cret-pw", "public", 1.5},
		"other":    "public",
		"flag":     true,
	}
	got, changed := placeholders(in, red)
	want := map[string]any{
		"password": "t4dsfu-qx",
		"dsn":      "postgres://app:t4dsfu-qx@db",
		"port":     int64(9191),
		"short":    "bc",
		"list":     []any{"t4dsfu-qx", "public", 1.5},
		"other":    "public",
		"flag":     true,
	}
	if !changed || !reflect.DeepEqual(got, want) {
		t.Fatalf("placeholders = %v (changed %v), want %v", got, changed, want)
	}
	if in["password"] != "s3cret-pw" {
		t.Fatal("the input was modified")
	}
	if _, changed := placeholders(map[string]any{"a": "public"}, red); changed {
		t.Fatal("changed without sensitive inputs")
	}
}

func TestMaskDiffMasksAboveAndBelowADerivedField(t *testing.T) {
	d := plan.Compare(map[string]any{}, map[string]any{"data": map[string]any{"token": "x"}, "metadata": map[string]any{"name": "n"}})
	plan.MaskDiff(d, sensitive.New(), "data.token")
	// Masking is at the leaf: the added data map is split, and only the
	// derived field is hidden.
	for _, c := range d.Changes {
		if c.Sensitive != (c.Path == "data.token") {
			t.Errorf("%s: sensitive %v", c.Path, c.Sensitive)
		}
	}
	d = plan.Compare(map[string]any{"data": map[string]any{"token": "x", "b": "1"}}, map[string]any{"data": map[string]any{"token": "y", "b": "2"}})
	plan.MaskDiff(d, sensitive.New(), "data.token")
	for _, c := range d.Changes {
		if c.Sensitive != (c.Path == "data.token") {
			t.Errorf("%s: sensitive %v", c.Path, c.Sensitive)
		}
	}
}
