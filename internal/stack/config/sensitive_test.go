package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sensitiveVars declares one sensitive variable of each shape; every
// release attribute in the tests below is built from them.
const sensitiveVars = `
variable "s" {
  type      = string
  default   = "shop"
  sensitive = true
}
variable "n" {
  type      = number
  default   = 3
  sensitive = true
}
variable "b" {
  type      = bool
  default   = true
  sensitive = true
}
variable "m" {
  type      = map(string)
  default   = { a = "x" }
  sensitive = true
}
variable "l" {
  type      = list(string)
  default   = ["a", "b"]
  sensitive = true
}
`

// TestSensitiveReleaseAttributes sets each release attribute from a
// sensitive value. Metadata (names, labels, flags, counts) may not be
// sensitive: it is shown in plans and stored in plain text on release
// records. values, set and set_sensitive may. Never a panic.
func TestSensitiveReleaseAttributes(t *testing.T) {
	const notAllowed = "Sensitive value not allowed"
	tests := []struct {
		attr    string // an attribute line inside the release block
		summary string // the expected error summary, "" for none
	}{
		{`labels = { t = var.s }`, notAllowed},
		{`labels = var.m`, notAllowed},
		{`labels = { for k, v in var.m : k => v }`, notAllowed},
		{`labels = merge({ a = "1" }, { t = var.s })`, notAllowed},
		{`name = var.s`, notAllowed},
		{`name = "x-${var.s}"`, notAllowed},
		{`namespace = var.s`, notAllowed},
		{`version = var.s`, notAllowed},
		{`timeout = "${var.n}s"`, notAllowed},
		{`history_max = var.n`, notAllowed},
		{`wait = var.b`, notAllowed},
		{`atomic = var.b`, notAllowed},
		{`create_namespace = var.b`, notAllowed},
		{`count = var.n`, notAllowed},
		{`count = length(var.l)`, notAllowed},
		{`for_each = var.m`, "Invalid for_each"},
		{`for_each = toset(var.l)`, "Invalid for_each"},
		{`for_each = { a = var.s }`, ""}, // each.value may be sensitive
		{`values = [{ a = var.s }]`, ""},
		{`values = [yamlencode({ a = var.m })]`, ""},
		{`values = var.l`, "Invalid YAML in values"},
		{`values = [var.s]`, "Invalid YAML in values"},
		{`set = { "a" = var.s, "b" = var.l }`, ""},
		{`set = var.m`, ""},
		{`set_sensitive = var.m`, ""},
		{`chart = var.s`, notAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.attr, func(t *testing.T) {
			chart := `chart = "./c"`
			if strings.HasPrefix(tt.attr, "chart") {
				chart = ""
			}
			src := fmt.Sprintf("%s\nrelease \"r\" {\n  %s\n  %s\n}\n", sensitiveVars, chart, tt.attr)
			stack, diags := evaluateSources(t, map[string]string{"main.hcl": src}, EvalOptions{})
			if tt.summary == "" {
				if diags != "" {
					t.Fatalf("diagnostics: %s", diags)
				}
				for _, ri := range stack.Releases {
					for _, l := range ri.Values {
						if _, _, err := l.Go(); err != nil {
							t.Errorf("values layer: %v", err)
						}
					}
				}
				return
			}
			if !strings.Contains(diags, tt.summary) {
				t.Fatalf("want %q, got %s", tt.summary, diags)
			}
			if !strings.Contains(diags, "main.hcl:") {
				t.Errorf("diagnostic without a source range: %s", diags)
			}
		})
	}
}

// TestSensitiveStackAttributes does the same for the other blocks.
func TestSensitiveStackAttributes(t *testing.T) {
	tests := []struct {
		src     string
		summary string
	}{
		{`stack "x" { default_namespace = var.s }`, "Sensitive value not allowed"},
		{`cluster "c" { context = var.s }`, "Sensitive value not allowed"},
		{`cluster "c" { kubeconfig = var.s }`, "Sensitive value not allowed"},
		{`repository "r" { url = "https://${var.s}" }`, "Sensitive value not allowed"},
		{`repository "r" {
  url      = "https://x"
  username = "u"
  password = var.s
}`, ""},
		{`repository "r" {
  url     = "https://x"
  ca_file = var.s
}`, "Sensitive value not allowed"},
		{`locals { x = { a = var.s } }`, ""},
		{`locals { x = file(var.s) }`, "sensitive path"},
		{`locals { x = fileexists(var.s) }`, ""},
		{`locals { x = templatefile(var.s, {}) }`, "sensitive path"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, diags := evaluateSources(t, map[string]string{"main.hcl": sensitiveVars + tt.src + "\n"}, EvalOptions{})
			switch {
			case tt.summary == "" && diags != "":
				t.Fatalf("diagnostics: %s", diags)
			case tt.summary != "" && !strings.Contains(diags, tt.summary):
				t.Fatalf("want %q, got %s", tt.summary, diags)
			case strings.Contains(diags, `"shop"`):
				t.Errorf("the sensitive value is in a diagnostic: %s", diags)
			}
		})
	}
}

// FuzzEvaluateSensitive evaluates whole stacks in which every release
// attribute (and the stack, cluster and repository attributes) may be set
// from sensitive variables, in shapes the input chooses: directly, inside
// maps, lists, templates, conditionals, for expressions and function
// calls. Evaluating, re-evaluating and converting values must never panic.
func FuzzEvaluateSensitive(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte("labels"))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte(strings.Repeat("\xff\x01", 40)))
	// One stack directory for every input, with a template for
	// templatefile() to read; file(var.s) reads "shop", which is absent.
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.tpl"), []byte("v: ${v}\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, choices []byte) {
		src := sensitiveStack(choices)
		cfg, diags := LoadSources(dir, map[string][]byte{"main.hcl": []byte(src)})
		checkDiags(t, diags)
		if diags.HasErrors() {
			return
		}
		stack, diags := Evaluate(context.Background(), cfg, EvalOptions{})
		checkDiags(t, diags)
		if stack == nil {
			return
		}
		for _, ri := range stack.Releases {
			for _, l := range ri.Values {
				DisplayValue(l.Value)
				_, _, _ = l.Go()
			}
			for _, v := range ri.Set {
				DisplayValue(v)
				_, _, _ = GoValue(v)
			}
			for _, v := range ri.SetSensitive {
				DisplayValue(v)
				_, _, _ = GoValue(v)
			}
			_, _ = stack.EvaluateRelease(ri.Addr, map[ReleaseInstanceAddr]AppliedRelease{})
		}
	})
}

// Expression shapes around a sensitive value X.
var sensitiveShapes = []string{
	"X",
	"{ k = X }",
	"[X]",
	"\"p-${X}\"",
	"true ? X : X",
	"[for e in [X] : e]",
	"{ for k, v in { a = X } : k => v }",
	"jsonencode(X)",
	"yamlencode({ a = X })",
	"tostring(X)",
	"tonumber(X)",
	"tobool(X)",
	"tomap({ a = X })",
	"toset([X])",
	"length(X)",
	"try(X, null)",
	"merge({ a = 1 }, { b = X })",
	"lookup({ a = X }, \"a\", null)",
	"sensitive_unknown",
	"null",
	"[{ a = X }]",
	"[yamlencode({ a = X })]",
	"{ \"a.b\" = X }",
	"coalesce(X, \"x\")",
	"keys(X)",
	"values(X)",
	"X[0]",
	"X.a",
	"file(X)",
	"fileexists(X)",
	"templatefile(\"t.tpl\", { v = X })",
}

var sensitiveRefs = []string{"var.s", "var.n", "var.b", "var.m", "var.l", "local.o", "each.value", "count.index"}

var releaseAttrs = []string{
	"name", "namespace", "chart", "version", "values", "set", "set_sensitive", "labels",
	"timeout", "history_max", "wait", "wait_for_jobs", "atomic", "cleanup_on_fail",
	"disable_hooks", "take_ownership", "adopt_from_stack", "create_namespace", "count", "for_each",
}

// sensitiveStack builds a stack from fuzz choices: for every release
// attribute, whether it is set and to which shape of which variable.
func sensitiveStack(choices []byte) string {
	i := 0
	next := func(n int) int {
		if i >= len(choices) {
			return 0
		}
		c := int(choices[i])
		i++
		return c % n
	}
	expr := func() string {
		shape := sensitiveShapes[next(len(sensitiveShapes))]
		ref := sensitiveRefs[next(len(sensitiveRefs))]
		if shape == "sensitive_unknown" {
			return "release.a.revision + " + ref
		}
		return strings.ReplaceAll(shape, "X", ref)
	}
	var b strings.Builder
	b.WriteString(sensitiveVars)
	b.WriteString("locals {\n  o = { a = var.s, b = [var.n] }\n}\n")
	if next(2) == 1 {
		fmt.Fprintf(&b, "stack \"x\" {\n  default_namespace = %s\n  atomic = %s\n}\n", expr(), expr())
	}
	if next(2) == 1 {
		fmt.Fprintf(&b, "cluster \"c\" {\n  context = %s\n}\n", expr())
	}
	if next(2) == 1 {
		fmt.Fprintf(&b, "repository \"r\" {\n  url = %s\n  password = %s\n  username = \"u\"\n}\n", expr(), expr())
	}
	b.WriteString("release \"a\" {\n  chart = \"./c\"\n}\n")
	b.WriteString("release \"r\" {\n")
	hasChart := false
	expansion := false
	for _, attr := range releaseAttrs {
		if next(3) == 0 {
			continue
		}
		if attr == "count" || attr == "for_each" {
			if expansion {
				continue
			}
			expansion = true
		}
		hasChart = hasChart || attr == "chart"
		fmt.Fprintf(&b, "  %s = %s\n", attr, expr())
	}
	if !hasChart {
		b.WriteString("  chart = \"./c\"\n")
	}
	if next(2) == 1 {
		b.WriteString("  cluster = cluster.c\n")
	}
	b.WriteString("}\n")
	return b.String()
}
