package config

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

// TestHostileInput feeds input that could crash or hang a recursive parser
// or evaluator. Each must come back as diagnostics (or a valid result),
// never a panic or a fatal stack overflow; a hang is caught by go test's
// timeout (tests assert no timing: on a loaded machine a bound flakes).
func TestHostileInput(t *testing.T) {
	rep := strings.Repeat
	tests := []struct {
		name    string
		src     string
		summary string // expected error summary; "" when any outcome but a crash is fine
	}{
		{"brackets", "locals {\n x = " + rep("[", 100000) + rep("]", 100000) + "\n}\n", "Nesting too deep"},
		{"parens", "locals {\n x = " + rep("(", 100000) + "1" + rep(")", 100000) + "\n}\n", "Nesting too deep"},
		{"objects", "locals {\n x = " + rep("{a=", 100000) + "1" + rep("}", 100000) + "\n}\n", "Nesting too deep"},
		{"blocks", rep("release \"x\" {\n", 10000) + rep("}\n", 10000), "Nesting too deep"},
		{"templates", "locals {\n x = " + rep(`"${`, 20000) + "1" + rep(`}"`, 20000) + "\n}\n", "Nesting too deep"},
		{"not", "locals {\n x = " + rep("!", 200000) + "true\n}\n", "Nesting too deep"},
		{"negation", "locals {\n x = " + rep("- ", 200000) + "1\n}\n", "Nesting too deep"},
		{"conditional chain", "locals {\n x = " + rep("true ? 1 : ", 100000) + "2\n}\n", "Nesting too deep"},
		{"conditional chain over lines", "locals {\n x = (\n" + rep("true ? 1 :\n", 100000) + "2)\n}\n", "Nesting too deep"},
		{"long sum", "locals {\n x = " + rep("1 + ", 200000) + "1\n}\n", ""},
		{"long traversal", "locals {\n x = var.a" + rep(".b", 200000) + "\n}\n", ""},
		{"long index chain", "locals {\n x = var.a" + rep("[0]", 200000) + "\n}\n", ""},
		{"huge file", "# " + rep("x", MaxFileSize) + "\n", "File too large"},
		{"invalid utf-8", "locals {\n x = \"\xc3\x28\"\n}\n", "Invalid character encoding"},
		{"nul bytes", "locals {\x00\x00 x = 1 }\n", ""},
		{"many locals", "locals {\n" + rep("x = 1\n", 1) + func() string {
			var b strings.Builder
			for i := range 20000 {
				b.WriteString("l")
				b.WriteString(strings.Repeat("a", i%7+1))
				b.WriteString(string(rune('a' + i%26)))
				b.WriteString(" = 1\n")
			}
			return b.String()
		}() + "}\n", ""},
		{"huge count", "release \"x\" {\n chart = \"./c\"\n count = 100000\n}\n", "Invalid count"},
		{"enormous count", "release \"x\" {\n chart = \"./c\"\n count = 1e12\n}\n", "Incorrect attribute value type"},
		{"yaml alias bomb", "locals {\n x = yamldecode(\"" + yamlBomb(12) + "\")\n}\n", "Error in function call"},
		{"yaml alias bomb in values", "release \"r\" {\n chart = \"./c\"\n values = [\"" + yamlBomb(20) + "\"]\n}\n", ""},
		{"cartesian product", "locals {\n x = setproduct(range(1000), range(1000), range(1000))\n}\n", "Error in function call"},
		{"format width", "locals {\n x = format(\"%0999999999d\", 1)\n}\n", "Error in function call"},
		{"indent", "locals {\n x = indent(999999999, \"a\\nb\")\n}\n", "Error in function call"},
		{"huge range", "locals {\n x = length(range(1e8))\n}\n", ""},
		{"local chain", func() string {
			var b strings.Builder
			b.WriteString("locals {\n a0 = 1\n")
			for i := 1; i < 5000; i++ {
				b.WriteString(" a" + itoa(i) + " = local.a" + itoa(i-1) + "\n")
			}
			return b.String() + "}\n"
		}(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := LoadSources(t.TempDir(), map[string][]byte{"main.hcl": []byte(tt.src)})
			if !diags.HasErrors() {
				_, d := Evaluate(context.Background(), cfg, EvalOptions{})
				diags = append(diags, d...)
			}
			if tt.summary == "" {
				return
			}
			for _, d := range diags {
				if d.Summary == tt.summary {
					return
				}
			}
			t.Errorf("want a %q diagnostic, got %v", tt.summary, diags)
		})
	}
}

// yamlBomb is a YAML document whose aliases expand to 9^levels values.
func yamlBomb(levels int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [1,1,1,1,1,1,1,1,1]\\n")
	for i := 1; i < levels; i++ {
		p := "*l" + itoa(i-1)
		b.WriteString("l" + itoa(i) + ": &l" + itoa(i) + " [" + strings.Repeat(p+",", 8) + p + "]\\n")
	}
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestValuesLayerAliasBomb checks that a values file whose YAML aliases
// expand exponentially is refused when converted for the chart engine.
func TestValuesLayerAliasBomb(t *testing.T) {
	cfg, diags := LoadSources(t.TempDir(), map[string][]byte{"main.hcl": []byte(
		"release \"r\" {\n chart = \"./c\"\n values = [\"" + yamlBomb(20) + "\"]\n}\n")})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	stack, diags := Evaluate(context.Background(), cfg, EvalOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	_, _, err := stack.Releases[0].Values[0].Go()
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("err = %v", err)
	}
}
