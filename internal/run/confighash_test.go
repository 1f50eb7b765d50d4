package run

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/convoy-sh/convoy/internal/config"
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
