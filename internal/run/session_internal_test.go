package run

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/convoy-sh/convoy/internal/stack/config"
)

// A saved plan is verified and applied with the session's stack only when
// loading the plan's source would load that stack: same directory,
// confinement, policy paths, variable values and environment (the default
// one when the session named none). Anything else is loaded for the plan.
func TestSessionMadeFrom(t *testing.T) {
	dir := t.TempDir()
	stack := `
environment "default" {}
environment "prod" {}
variable "v" {
  default = "a"
}
release "app" {
  chart  = "./c"
  values = [{ v = var.v }]
}
`
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := config.RawValues{config.VariableValue(config.ValueFromCaller, "spec.vars", "v", "b")}
	before := config.ReadCounts()
	s, err := Open(context.Background(), Options{Source: Source{Dir: dir, Variables: vars}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := config.ReadCounts().Sub(before).Evaluations; n != 1 {
		t.Fatalf("Open evaluated the stack %d times, want once", n)
	}
	other := config.RawValues{config.VariableValue(config.ValueFromCaller, "spec.vars", "v", "c")}
	tests := []struct {
		name string
		src  Source
		want bool
	}{
		{"the plan's source", Source{Dir: dir, Environment: "default", Variables: vars}, true},
		{"the directory by another path", Source{Dir: filepath.Join(dir, "."), Environment: "default", Variables: vars}, true},
		{"another directory", Source{Dir: t.TempDir(), Environment: "default", Variables: vars}, false},
		{"another value", Source{Dir: dir, Environment: "default", Variables: other}, false},
		{"no value", Source{Dir: dir, Environment: "default"}, false},
		{"another environment", Source{Dir: dir, Environment: "prod", Variables: vars}, false},
		{"policy paths", Source{Dir: dir, Environment: "default", Variables: vars, PolicyPaths: []string{"p"}}, false},
		{"confined", Source{Dir: dir, Environment: "default", Variables: vars, Root: dir}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.madeFrom(tt.src); got != tt.want {
				t.Fatalf("madeFrom = %v, want %v", got, tt.want)
			}
		})
	}
}
