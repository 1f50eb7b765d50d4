package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStackNameFromDirectory: a stack without a stack block is named after
// its directory's real name, however the directory was given (issue 21:
// `cd mini && convoy plan` named the stack ".").
func TestStackNameFromDirectory(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "mini")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(`release "r" { chart = "./c" }`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(dir, "sub"))
	for _, given := range []string{"..", "../", "../.", "../../mini", dir, dir + "/"} {
		t.Run(given, func(t *testing.T) {
			cfg, diags := LoadDir(given)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			st, diags := Evaluate(context.Background(), cfg, EvalOptions{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if st.Name != "mini" {
				t.Errorf("stack name for -C %q = %q, want %q", given, st.Name, "mini")
			}
		})
	}
	t.Run(".", func(t *testing.T) {
		t.Chdir(dir)
		cfg, _ := LoadDir(".")
		st, diags := Evaluate(context.Background(), cfg, EvalOptions{})
		if diags.HasErrors() || st.Name != "mini" {
			t.Errorf("stack name for -C . = %q (%v), want %q", st.Name, diags, "mini")
		}
	})
}

// TestInvalidStackName: the stack's name is the convoy.dev/stack label of
// its release records, so it must be a label value; one that is not is a
// diagnostic naming where the name comes from, not a selector error later.
func TestInvalidStackName(t *testing.T) {
	t.Run("stack block", func(t *testing.T) {
		_, diags := evaluateSources(t, map[string]string{"main.hcl": `
stack "my shop" {
}
release "r" { chart = "./c" }
`}, EvalOptions{})
		if !strings.Contains(diags, "main.hcl:2:7: error: Invalid stack name") || !strings.Contains(diags, `"my shop"`) {
			t.Errorf("diagnostics:\n%s", diags)
		}
	})
	t.Run("too long with its environment", func(t *testing.T) {
		long := strings.Repeat("e", 60)
		_, diags := evaluateSources(t, map[string]string{"main.hcl": `
stack "shop" {}
environment "` + long + `" {}
release "r" { chart = "./c" }
`}, EvalOptions{Environment: long})
		if !strings.Contains(diags, "main.hcl:3:1: error: Invalid stack name") || !strings.Contains(diags, "Invalid stack name") || !strings.Contains(diags, "shop."+long) {
			t.Errorf("diagnostics:\n%s", diags)
		}
	})
	t.Run("directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "my stack")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(`release "r" { chart = "./c" }`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, diags := LoadDir(dir)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		_, diags = Evaluate(context.Background(), cfg, EvalOptions{})
		text := diags.Error()
		if !diags.HasErrors() || !strings.Contains(text, "Invalid stack name") || !strings.Contains(text, dir) || !strings.Contains(text, "stack block") {
			t.Errorf("diagnostics: %s", text)
		}
	})
}
