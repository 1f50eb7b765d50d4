package textdiff

import (
	"strings"
	"testing"
)

func render(ops []Op) string {
	var b strings.Builder
	for _, o := range ops {
		b.WriteByte(o.Kind)
		b.WriteString(o.Line)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestLines(t *testing.T) {
	tests := []struct{ name, a, b, want string }{
		{"equal", "x\ny\n", "x\ny\n", " x\n y\n"},
		{"changed line, deletion first", "a\nb\nc\n", "a\nB\nc\n", " a\n-b\n+B\n c\n"},
		{"added and removed", "a\nb\n", "b\nc\n", "-a\n b\n+c\n"},
		{"from empty", "", "n\n", "+n\n"},
	}
	for _, tt := range tests {
		if got := render(Lines(tt.a, tt.b, 1<<20)); got != tt.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tt.name, got, tt.want)
		}
	}
}

func TestLinesFallsBackBeyondMaxCells(t *testing.T) {
	if got := render(Lines("a\nb\n", "a\nc\n", 4)); got != "-a\n-b\n+a\n+c\n" {
		t.Fatalf("got\n%s", got)
	}
}
