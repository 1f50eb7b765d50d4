package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With EvalOptions.Root (the controller), every path a stack names must
// lead inside the artifact: absolute and ~/ paths, charts and repository
// files outside it and symlinks out of it are errors at the expression,
// and the file is not read. Without Root (the CLI), the same stacks
// evaluate as before.
func TestConfinedPaths(t *testing.T) {
	host := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(host, []byte("token: s3cr3t-admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		body   string // a release block's attributes besides name, namespace
		chart  string // the chart attribute ("./charts/app" when empty)
		want   string // "stack.hcl:LINE:COL: summary" with Root
		detail string
		cli    bool // the CLI evaluates it without error
	}{
		{name: "file of an absolute path", body: fmt.Sprintf(`values = [{ k = base64encode(file(%q)) }]`, host),
			want: "stack.hcl:6,38-", detail: "is an absolute path: the controller reads only the files of the pulled stack artifact", cli: true},
		{name: "fileexists of an absolute path", body: fmt.Sprintf(`values = [{ k = fileexists(%q) }]`, host),
			want: "stack.hcl:6,31-", detail: "is an absolute path", cli: true},
		{name: "templatefile of a home path", body: `values = [{ k = templatefile("~/.kube/config", {}) }]`,
			want: "stack.hcl:6,33-", detail: "~/.kube/config is an absolute path"},
		{name: "file leaving the stack directory", body: `values = [{ k = file("../outside.txt") }]`,
			want: "stack.hcl:6,25-", detail: "outside the stack directory"},
		{name: "file through a symlink out of the artifact", body: `values = [{ k = file("link.txt") }]`,
			want: "stack.hcl:6,25-", detail: "outside the stack directory"},
		{name: "chart outside the artifact", chart: "../../outside-chart",
			want: "stack.hcl:5,15-", detail: "outside the stack artifact", cli: true},
		{name: "chart through a symlink out of the artifact", chart: "./chartlink",
			want: "stack.hcl:5,15-", detail: "outside the stack artifact", cli: true},
		{name: "chart at an absolute path", chart: "/etc",
			want: "stack.hcl:5,15-", detail: "is an absolute path", cli: true},
		{name: "post_renderer", body: `post_renderer = { command = "cat", args = ["/etc/hostname"] }`,
			want: "stack.hcl:6,19-", detail: "runs no program of a stack", cli: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// root/ is the artifact: root/stack the stack, root/charts/app
			// a chart beside it; outside.txt and outside-chart/ are beside
			// root.
			base := t.TempDir()
			root := filepath.Join(base, "root")
			dir := filepath.Join(root, "stack")
			for _, d := range []string{dir, filepath.Join(root, "charts", "app"), filepath.Join(base, "outside-chart")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(root, "outside.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(host, filepath.Join(dir, "link.txt")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(base, "outside-chart"), filepath.Join(dir, "chartlink")); err != nil {
				t.Fatal(err)
			}
			chart := tt.chart
			if chart == "" {
				chart = "../charts/app"
			}
			src := fmt.Sprintf(`stack "s" {}
release "app" {
  name      = "app"
  namespace = "default"
  chart     = %q
  %s
}
`, chart, tt.body)
			if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, diags := LoadDir(dir)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			_, diags = Evaluate(context.Background(), cfg, EvalOptions{Root: root})
			if !diags.HasErrors() {
				t.Fatal("confined: no error")
			}
			text := diags.Error()
			if !strings.Contains(text, tt.want) || !strings.Contains(text, tt.detail) {
				t.Errorf("confined: got %s\nwant %q with %q", text, tt.want, tt.detail)
			}
			if strings.Contains(text, "s3cr3t") {
				t.Errorf("the error shows the file's content: %s", text)
			}
			_, diags = Evaluate(context.Background(), cfg, EvalOptions{})
			if tt.cli && diags.HasErrors() {
				t.Errorf("the CLI: %s", diags.Error())
			}
		})
	}
}

// Inside the artifact, confinement changes nothing: files of the stack
// directory and charts beside it.
func TestConfinedPathsInsideTheArtifact(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "stack")
	for _, d := range []string{filepath.Join(dir, "values"), filepath.Join(root, "charts", "app")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "values", "app.yaml"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `stack "s" {}
release "app" {
  name      = "app"
  namespace = "default"
  chart     = "../charts/app"
  values    = [file("values/app.yaml"), { b = fileexists("values/none.yaml") }, templatefile("values/app.yaml", {})]
}
`
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := LoadDir(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, diags := Evaluate(context.Background(), cfg, EvalOptions{Root: root}); diags.HasErrors() {
		t.Fatal(diags)
	}
}
