package source_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart/source"
)

func TestReadLockDiagnostics(t *testing.T) {
	digest := `"sha256:` + strings.Repeat("ab", 32) + `"`
	for _, tc := range []struct{ name, text, want string }{
		{"syntax", "release \"web\" {\n  chart = \n", "convoy.lock.hcl:2,11"},
		{"missing attribute", "release \"web\" {\n  chart = \"c/web\"\n  version = \"1.0.0\"\n}\n", `The argument "source" is required`},
		{"bad digest", "release \"web\" {\n  chart = \"c/web\"\n  source = \"https://x\"\n  version = \"1.0.0\"\n  digest = \"md5:abc\"\n}\n", `release "web": digest "md5:abc" is not sha256`},
		{"duplicate", "release \"web\" {\n  chart = \"c/web\"\n  source = \"https://x\"\n  version = \"1.0.0\"\n  digest = " + digest + "\n}\nrelease \"web\" {\n  chart = \"c/web\"\n  source = \"https://x\"\n  version = \"1.0.0\"\n  digest = " + digest + "\n}\n", `release "web" is locked twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, source.LockFileName), []byte(tc.text), 0o644)
			_, diags := source.ReadLock(dir)
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, diags)
			}
		})
	}
	// No lock file is an empty lock.
	l, diags := source.ReadLock(t.TempDir())
	if diags.HasErrors() || len(l.Releases) != 0 {
		t.Fatalf("missing lock file: %v %v", l, diags)
	}
}
