package ctl

import (
	"os/exec"
	"strings"
	"testing"
)

// The client side of the controller's objects, and the rooms the
// controller is wired from, never link the controller: the CLI's Stack and
// Pipeline commands and the UI reach the API server through ctl and
// planstore alone.
func TestClientsDoNotImportTheController(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the imports: %v", err)
	}
	const module = "github.com/convoy-sh/convoy/"
	const forbidden = module + "internal/controller"
	clients := []string{
		module + "internal/controller/ctl",
		module + "internal/controller/planstore",
		module + "internal/controller/notify",
		module + "internal/controller/pipeline",
		module + "internal/ui",
	}
	args := append([]string{"list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}, clients...)
	out, err := exec.Command(goCmd, args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if imp == forbidden {
				t.Errorf("%s imports %s: the controller's clients and rooms must not depend on it", fields[0], forbidden)
			}
		}
	}
}
