package config

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// evalSource loads and evaluates one main.hcl.
func evalSource(t *testing.T, src string) (*Stack, hcl.Diagnostics) {
	t.Helper()
	cfg, diags := LoadSources("/stack", map[string][]byte{"main.hcl": []byte(src)})
	if diags.HasErrors() {
		return nil, diags
	}
	st, d := Evaluate(context.Background(), cfg, EvalOptions{})
	return st, append(diags, d...)
}

func sourcesOf(st *Stack, addr string) string {
	a, _ := ParseReleaseInstanceAddr(addr)
	var out []string
	for _, s := range st.Moves.Sources(a) {
		out = append(out, s.Addr.String())
	}
	return strings.Join(out, " ")
}

func TestMovedSources(t *testing.T) {
	st, diags := evalSource(t, `
release "c" {
  chart = "./chart"
}
release "each" {
  for_each = toset(["eu", "us"])
  chart    = "./chart"
}
release "n" {
  count = 2
  chart = "./chart"
}
moved {
  from = release.a
  to   = release.b
}
moved {
  from = release.b
  to   = release.c
}
moved {
  from = release.single
  to   = release.each["eu"]
}
moved {
  from = release.old_each
  to   = release.each
}
moved {
  from = release.n0
  to   = release.n[0]
}
`)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	for addr, want := range map[string]string{
		`release.c`:          "release.b release.a",
		`release.each["eu"]`: `release.single release.old_each["eu"]`,
		`release.each["us"]`: `release.old_each["us"]`,
		`release.n[0]`:       "release.n0",
		`release.n[1]`:       "",
	} {
		if got := sourcesOf(st, addr); got != want {
			t.Errorf("sources of %s: got %q, want %q", addr, got, want)
		}
	}
}

func TestRemovedBlocks(t *testing.T) {
	st, diags := evalSource(t, `
removed {
  from    = release.x
  destroy = false
}
removed {
  from = release.y["eu"]
}
`)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if len(st.Removed) != 2 {
		t.Fatalf("got %d removed blocks", len(st.Removed))
	}
	x, y := st.Removed[0], st.Removed[1]
	if x.Destroy || x.From.Addr.String() != "release.x" || x.From.Keyed {
		t.Errorf("first block: %+v", x)
	}
	if !y.Destroy || y.From.Addr.String() != `release.y["eu"]` || !y.From.Keyed {
		t.Errorf("second block: %+v", y)
	}
	a, _ := ParseReleaseInstanceAddr(`release.x[2]`)
	b, _ := ParseReleaseInstanceAddr(`release.y["us"]`)
	if !x.Matches(a) || y.Matches(b) {
		t.Error("Matches: a removed block without a key names every instance; with one, that instance only")
	}
}

// TestMoveDiagnostics pins each error of moved and removed blocks to its
// line and column.
func TestMoveDiagnostics(t *testing.T) {
	const web = "release \"web\" {\n  chart = \"./chart\"\n}\n"
	tests := []struct {
		name, src string
		at        string // line:column of the subject
		summary   string
		detail    string
	}{
		{"to itself", "moved {\n  from = release.a\n  to   = release.a\n}\n", "2:10", "Redundant moved block", "to itself"},
		{"not an address", "moved {\n  from = var.a\n  to   = release.b\n}\n", "2:10", "Invalid release address", "from must be"},
		{"not a key", "moved {\n  from = release.a[true]\n  to   = release.b\n}\n", "2:10", "Invalid release address", ""},
		{"missing to", "moved {\n  from = release.a\n}\n", "1:7", "Missing required argument", `"to"`},
		{"still declared", web + "moved {\n  from = release.web\n  to   = release.b\n}\n", "5:10", "Release still declared", "main.hcl:1,1-14"},
		{"two places", "moved {\n  from = release.a\n  to   = release.b\n}\nmoved {\n  from = release.a\n  to   = release.c\n}\n", "6:10", "Ambiguous move statements", "moves release.a to release.b"},
		{"one place", "moved {\n  from = release.a\n  to   = release.c\n}\nmoved {\n  from = release.b\n  to   = release.c\n}\n", "7:10", "Ambiguous move statements", "release.b there too"},
		{"cycle", "moved {\n  from = release.a\n  to   = release.b\n}\nmoved {\n  from = release.b\n  to   = release.c\n}\nmoved {\n  from = release.c\n  to   = release.a\n}\n", "9:1", "Cyclic move statements", "release.a → release.b → release.c → release.a"},
		{"removed declared", web + "removed {\n  from = release.web\n  destroy = false\n}\n", "5:10", "Release still declared", "removed block"},
		{"removed twice", "removed {\n  from = release.x\n}\nremoved {\n  from = release.x\n}\n", "5:10", "Duplicate removed block", "main.hcl:1,1-8"},
		{"removed and moved", "moved {\n  from = release.x\n  to   = release.y\n}\nremoved {\n  from = release.x\n}\n", "6:10", "Removed release is moved", "release.x to release.y"},
		{"destroy not literal", "removed {\n  from = release.x\n  destroy = var.d\n}\n", "3:13", "Variables not allowed", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := evalSource(t, tt.src)
			var found []string
			for _, d := range diags {
				if d.Subject == nil {
					continue
				}
				at := fmt.Sprintf("%d:%d", d.Subject.Start.Line, d.Subject.Start.Column)
				found = append(found, fmt.Sprintf("%s %s %s: %s: %s", filepath.Base(d.Subject.Filename), at, d.Summary, d.Detail, d.Subject))
				if at == tt.at && d.Summary == tt.summary && strings.Contains(d.Detail, tt.detail) && filepath.Base(d.Subject.Filename) == "main.hcl" {
					return
				}
			}
			t.Errorf("no diagnostic %q at main.hcl:%s with detail containing %q; got:\n%s", tt.summary, tt.at, tt.detail, strings.Join(found, "\n"))
		})
	}
}
