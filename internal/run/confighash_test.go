package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/convoy-sh/convoy/internal/stack/config"
)

func TestConfigHashCoversTheLockFile(t *testing.T) {
	dir := t.TempDir()
	src := map[string][]byte{filepath.Join(dir, "stack.hcl"): []byte("release \"a\" {\n  chart = \"./c\"\n}\n")}
	cfg, diags := config.LoadSources(dir, src)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	hash := func() string {
		h, err := ConfigHash(cfg, config.EvalOptions{}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	noLock := hash()
	lock := filepath.Join(dir, config.LockFileName)
	if err := os.WriteFile(lock, []byte("# v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v1 := hash()
	if err := os.WriteFile(lock, []byte("# v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v2 := hash(); noLock == v1 || v1 == v2 {
		t.Fatalf("the config hash ignores the lock file: %s %s %s", noLock, v1, v2)
	}
}

// TestConfigHashCoversTheVariables: every variable value given changes the
// hash, sensitivity included; what does not change evaluation does not:
// the name of a --var-file (pipes are named anew) and the order of values
// of different sources.
func TestConfigHashCoversTheVariables(t *testing.T) {
	dir := t.TempDir()
	cfg, diags := config.LoadSources(dir, map[string][]byte{"stack.hcl": []byte("variable \"v\" {}\n")})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	hash := func(vals ...config.RawValue) string {
		t.Helper()
		h, err := ConfigHash(cfg, config.EvalOptions{Variables: vals}, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	auto := func(name, src string) config.RawValue {
		return config.VariablesFile(config.ValueFromAutoFile, filepath.Join(dir, name), []byte(src))
	}
	named := func(name, src string) config.RawValue {
		return config.VariablesFile(config.ValueFromNamedFile, name, []byte(src))
	}
	env := func(v string) config.RawValue {
		return config.VariableValue(config.ValueFromEnvVar, "CONVOY_VAR_v", "v", v)
	}
	cli := func(v string) config.RawValue { return config.VariableValue(config.ValueFromCLIArg, "--var", "v", v) }
	caller := func(v string, sensitive bool) config.RawValue {
		rv := config.VariableValue(config.ValueFromCaller, "Secret ns/s", "v", v)
		rv.Sensitive = sensitive
		return rv
	}
	tests := []struct {
		name string
		a, b []config.RawValue
		same bool
	}{
		{"none and an auto file", nil, []config.RawValue{auto("a.auto.vars.hcl", "v = 1")}, false},
		{"auto file content", []config.RawValue{auto("a.auto.vars.hcl", "v = 1")}, []config.RawValue{auto("a.auto.vars.hcl", "v = 2")}, false},
		{"auto file name", []config.RawValue{auto("a.auto.vars.hcl", "v = 1")}, []config.RawValue{auto("b.auto.vars.hcl", "v = 1")}, false},
		{"--var-file content", []config.RawValue{named("a", "v = 1")}, []config.RawValue{named("a", "v = 2")}, false},
		{"--var-file name", []config.RawValue{named("/dev/fd/63", "v = 1")}, []config.RawValue{named("/dev/fd/12", "v = 1")}, true},
		{"--var-file order", []config.RawValue{named("a", "v = 1"), named("b", "v = 2")}, []config.RawValue{named("b", "v = 2"), named("a", "v = 1")}, false},
		{"CONVOY_VAR", []config.RawValue{env("1")}, []config.RawValue{env("2")}, false},
		{"--var", []config.RawValue{cli("1")}, []config.RawValue{cli("2")}, false},
		{"--var or CONVOY_VAR", []config.RawValue{cli("1")}, []config.RawValue{env("1")}, false},
		{"caller", []config.RawValue{caller("1", false)}, []config.RawValue{caller("2", false)}, false},
		{"sensitivity", []config.RawValue{caller("1", false)}, []config.RawValue{caller("1", true)}, false},
		{"sources in another order", []config.RawValue{cli("1"), env("2"), named("a", "v = 3")}, []config.RawValue{named("a", "v = 3"), env("2"), cli("1")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if same := hash(tt.a...) == hash(tt.b...); same != tt.same {
				t.Errorf("same hash %v, want %v", same, tt.same)
			}
		})
	}
}
