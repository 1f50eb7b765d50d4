package chart

import (
	"os/exec"
	"strings"
	"testing"
)

// The chart engine (this package and everything under it) must not depend
// on the stack language: a chart is rendered the same whoever asks, and
// internal/stack/config may grow without dragging the engine along. Shared names
// (the lock file's) live in small packages below both (internal/lockfile).
func TestChartEngineDoesNotImportTheStackLanguage(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the engine's imports: %v", err)
	}
	const module = "github.com/convoy-sh/convoy/"
	forbidden := []string{module + "internal/stack/config"}
	// Every package under internal/chart with the packages it imports
	// directly, then the transitive closure of each (-deps).
	out, err := exec.Command(goCmd, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"internal/chart/...").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	importers := map[string][]string{} // package → the packages importing it
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			importers[imp] = append(importers[imp], fields[0])
		}
	}
	for _, f := range forbidden {
		if by, ok := importers[f]; ok {
			t.Errorf("internal/chart/... depends on %s (imported by %s): the chart engine must not depend on the stack language", f, strings.Join(by, ", "))
		}
	}
}
