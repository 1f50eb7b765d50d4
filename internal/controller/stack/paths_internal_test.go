package stack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStripStackPaths(t *testing.T) {
	stacks := filepath.Join(t.TempDir(), "stacks")
	hex := "sha256-" + hexOf('a')
	if err := os.MkdirAll(filepath.Join(stacks, hex, "tree", "stacks", "shop"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The archive's root holds the stack directory stacks/shop and the
	// charts it names by relative path (../../charts/app).
	if err := os.WriteFile(filepath.Join(stacks, hex, "stack-path"), []byte("stacks/shop"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := stacks + "/" + hex + "/tree/"
	for _, tc := range []struct{ in, want string }{
		{"on " + tree + "stacks/shop/stack.hcl line 3", "on stack.hcl line 3"},
		{tree + "stacks/shop/stack.hcl:3,1-5: x; and " + tree + "charts/app/values.yaml", "stack.hcl:3,1-5: x; and ../../charts/app/values.yaml"},
		{"nothing to strip", "nothing to strip"},
		{"/elsewhere/stacks/" + hex + "/tree/stack.hcl", "/elsewhere/stacks/" + hex + "/tree/stack.hcl"},
	} {
		if got := stripStackPaths(tc.in, stacks); got != tc.want {
			t.Errorf("stripStackPaths(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func hexOf(c byte) string { return strings.Repeat(string(c), 64) }
