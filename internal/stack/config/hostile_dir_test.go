package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// TestHostileStackDirectory loads and evaluates stack directories with
// symlinks to devices and host files, FIFOs and escaping links, as an
// untrusted pull request could contain. Each must come back quickly as a
// diagnostic at the right place, without reading the file.
func TestHostileStackDirectory(t *testing.T) {
	// Paths in a test's entries are relative to the stack directory; a
	// symlink target starting with "OUT/" is in a directory beside it
	// holding secret.yaml; "FIFO" makes a FIFO.
	type entry struct{ name, target string }
	tests := []struct {
		name    string
		main    string  // main.hcl
		entries []entry // besides main.hcl
		want    string  // "file:line:col: summary" of the expected error, "" for none
		detail  string  // substring of its detail
	}{
		{
			name:    "stack file is a symlink to /dev/zero",
			main:    `locals {}`,
			entries: []entry{{"zero.hcl", "/dev/zero"}},
			want:    "zero.hcl:1:1: Invalid stack file",
			detail:  "zero.hcl is a symlink to /dev/zero, which is a character device, not a regular file",
		},
		{
			name:    "stack file is a FIFO",
			main:    `locals {}`,
			entries: []entry{{"fifo.hcl", "FIFO"}},
			want:    "fifo.hcl:1:1: Invalid stack file",
			detail:  "is a FIFO, not a regular file",
		},
		{
			name:    "stack file is a symlink to /etc/passwd",
			main:    `locals {}`,
			entries: []entry{{"passwd.hcl", "/etc/passwd"}},
			want:    "passwd.hcl:1:1: Invalid stack file",
			detail:  "which is outside the stack directory",
		},
		{
			name:    "auto variables file is a symlink to /dev/zero",
			main:    `locals {}`,
			entries: []entry{{"x.auto.vars.hcl", "/dev/zero"}},
			want:    "x.auto.vars.hcl:1:1: Invalid stack file",
			detail:  "symlink to /dev/zero",
		},
		{
			name:    "file() of a symlink to /dev/zero",
			main:    "locals {\n  x = file(\"values/z.yaml\")\n}",
			entries: []entry{{"values/z.yaml", "/dev/zero"}},
			want:    "main.hcl:2:13: Invalid function argument",
			detail:  "values/z.yaml is a symlink to /dev/zero, which is a character device, not a regular file",
		},
		{
			name:    "values file is a symlink to /dev/zero",
			main:    "release \"r\" {\n  chart  = \"./c\"\n  values = [file(\"values/z.yaml\")]\n}",
			entries: []entry{{"values/z.yaml", "/dev/zero"}},
			want:    "main.hcl:3:19: Invalid function argument",
			detail:  "symlink to /dev/zero",
		},
		{
			name:    "values file is a symlink to /etc/passwd",
			main:    "release \"r\" {\n  chart  = \"./c\"\n  values = [file(\"values/p.yaml\")]\n}",
			entries: []entry{{"values/p.yaml", "/etc/passwd"}},
			want:    "main.hcl:3:19: Invalid function argument",
			detail:  "values/p.yaml is a symlink to /etc/passwd, which is outside the stack directory; write an absolute path",
		},
		{
			name:    "file() of a symlink to /etc/passwd",
			main:    "locals {\n  x = file(\"p\")\n}",
			entries: []entry{{"p", "/etc/passwd"}},
			want:    "main.hcl:2:13: Invalid function argument",
			detail:  "outside the stack directory",
		},
		{
			name:    "templatefile() of a symlink to /dev/zero",
			main:    "locals {\n  x = templatefile(\"t.tpl\", {})\n}",
			entries: []entry{{"t.tpl", "/dev/zero"}},
			want:    "main.hcl:2:21: Invalid function argument",
			detail:  "symlink to /dev/zero",
		},
		{
			name:    "values file is a FIFO",
			main:    "release \"r\" {\n  chart  = \"./c\"\n  values = [file(\"values/f.yaml\")]\n}",
			entries: []entry{{"values/f.yaml", "FIFO"}},
			want:    "main.hcl:3:19: Invalid function argument",
			detail:  "values/f.yaml is a FIFO, not a regular file",
		},
		{
			name:    "fileexists() of a FIFO",
			main:    "locals {\n  x = fileexists(\"f\")\n}",
			entries: []entry{{"f", "FIFO"}},
			want:    "main.hcl:2:19: Invalid function argument",
			detail:  "f is a FIFO, not a regular file",
		},
		{
			name:    "relative symlink that escapes",
			main:    "locals {\n  x = file(\"values/e.yaml\")\n}",
			entries: []entry{{"values/e.yaml", "OUT/secret.yaml"}},
			want:    "main.hcl:2:13: Invalid function argument",
			detail:  "values/e.yaml is a symlink to ",
		},
		{
			name: "relative path that escapes",
			main: "locals {\n  x = file(\"../out/secret.yaml\")\n}",
			want: "main.hcl:2:13: Invalid function argument",
		},
		{
			name:    "fileexists() of an escaping symlink",
			main:    "locals {\n  x = fileexists(\"e\")\n}",
			entries: []entry{{"e", "OUT/secret.yaml"}},
			want:    "main.hcl:2:19: Invalid function argument",
			detail:  "outside the stack directory",
		},
		{
			name: "absolute path outside, written by the user",
			main: "locals {\n  x = file(\"OUT/secret.yaml\")\n}",
		},
		{
			name:    "symlink inside to a file inside",
			main:    "locals {\n  x = file(\"values/link.yaml\")\n  y = fileexists(\"values/link.yaml\")\n}",
			entries: []entry{{"values/a.yaml", ""}, {"values/link.yaml", "a.yaml"}},
		},
		{
			name:    "stack file that is a symlink inside",
			main:    `locals {}`,
			entries: []entry{{"sub/other.txt", ""}, {"other.hcl", "sub/other.txt"}},
		},
		{
			name:    "ca_file is a symlink to /dev/zero",
			main:    "repository \"r\" {\n  url     = \"https://x\"\n  ca_file = \"ca.pem\"\n}",
			entries: []entry{{"ca.pem", "/dev/zero"}},
			want:    "main.hcl:3:13: Invalid ca_file",
			detail:  "ca.pem is a symlink to /dev/zero, which is a character device",
		},
		{
			name:    "key_file is a symlink that escapes",
			main:    "repository \"r\" {\n  url       = \"https://x\"\n  cert_file = \"c.pem\"\n  key_file  = \"k.pem\"\n}",
			entries: []entry{{"c.pem", ""}, {"k.pem", "OUT/secret.yaml"}},
			want:    "main.hcl:4:15: Invalid key_file",
			detail:  "outside the stack directory",
		},
		{
			name: "ca_file not there yet",
			main: "repository \"r\" {\n  url     = \"https://x\"\n  ca_file = \"ca.pem\"\n}",
		},
		{
			name:    "dangling symlink is not there",
			main:    "locals {\n  x = fileexists(\"d\") ? 1 : 0\n}",
			entries: []entry{{"d", "nowhere"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			dir, out := filepath.Join(base, "stack"), filepath.Join(base, "out")
			mkdir(t, dir)
			mkdir(t, out)
			writeFile(t, filepath.Join(out, "secret.yaml"), "secret: 1\n")
			writeFile(t, filepath.Join(dir, "main.hcl"), strings.ReplaceAll(tt.main, "OUT/", out+"/")+"\n")
			for _, e := range tt.entries {
				p := filepath.Join(dir, e.name)
				mkdir(t, filepath.Dir(p))
				switch {
				case e.target == "":
					writeFile(t, p, "locals {}\n")
				case e.target == "FIFO":
					if err := syscall.Mkfifo(p, 0o644); err != nil {
						t.Fatal(err)
					}
				default:
					if err := os.Symlink(strings.ReplaceAll(e.target, "OUT/", out+"/"), p); err != nil {
						t.Fatal(err)
					}
				}
			}
			var diags hcl.Diagnostics
			withDeadline(t, func() { diags = loadAndEvaluate(dir, EvalOptions{}) })
			got := formatDiags(dir, diags)
			if tt.want == "" {
				if diags.HasErrors() {
					t.Fatalf("diagnostics: %s", got)
				}
				return
			}
			for _, d := range diags {
				if d.Subject == nil {
					continue
				}
				loc := formatDiags(dir, hcl.Diagnostics{d})
				if strings.HasPrefix(loc, strings.Replace(tt.want, ": ", ": error: ", 1)) && strings.Contains(d.Detail, tt.detail) {
					return
				}
			}
			t.Fatalf("want %q with %q, got:\n%s", tt.want, tt.detail, got)
		})
	}
}

// withDeadline fails the test if f has not returned after five seconds:
// it catches hangs, not slow machines.
func withDeadline(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("hung")
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, src string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVarFileArgument checks that --var-file, named on the command line,
// may be a pipe (--var-file <(...)) but is still read only up to the
// limit.
func TestVarFileArgument(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.hcl"), "variable \"v\" {\n  default = 1\n}\n")
	cfg, diags := LoadDir(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	withDeadline(t, func() {
		_, diags = ReadVarFile("/dev/zero")
	})
	if got := formatDiags(dir, diags); !strings.Contains(got, "File too large") {
		t.Errorf("diagnostics: %s", got)
	}
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			f.WriteString("v = 2\n")
			f.Close()
		}
	}()
	var stack *Stack
	withDeadline(t, func() {
		var vf RawValue
		if vf, diags = ReadVarFile(fifo); !diags.HasErrors() {
			stack, diags = Evaluate(context.Background(), cfg, EvalOptions{Variables: RawValues{vf}})
		}
	})
	if diags.HasErrors() {
		t.Fatal(formatDiags(dir, diags))
	}
	if got := stack.ev.vars["v"]; !got.RawEquals(cty.NumberIntVal(2)) {
		t.Errorf("var.v = %#v, want 2 from the pipe", got)
	}
}
