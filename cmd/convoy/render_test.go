package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/resolve"
	"sigs.k8s.io/yaml"
)

// helmOracle finds helm v4.3.1: $CONVOY_HELM, else the tools cache.
func helmOracle(t *testing.T) string {
	t.Helper()
	devtest.SkipShort(t, "the helm oracle")
	if p := os.Getenv("CONVOY_HELM"); p != "" {
		return p
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	p := filepath.Join(cache, "convoy", "tools", "helm-v4.3.1", "bin", "helm")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("helm oracle not found at %s (set CONVOY_HELM or run hack/build-tools.sh helm): %v", p, err)
	}
	return p
}

// TestRenderMatchesHelmTemplate renders every release of every example
// stack with `convoy render --release` and with `helm template` given the
// same user values (as a -f file), and requires identical bytes.
func TestRenderMatchesHelmTemplate(t *testing.T) {
	helm := helmOracle(t)
	dirs, err := filepath.Glob("../../examples/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		ls, err := loadOrdered(context.Background(), run.Source{Dir: dir})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		charts := resolve.NewCharts(chartCache())
		for _, r := range ls.Stack.Releases {
			t.Run(filepath.Base(dir)+"/"+r.Addr.String(), func(t *testing.T) {
				rel, err := resolve.Resolve(charts, ls.Stack.Dir, r)
				if err != nil {
					t.Fatal(err)
				}
				vals, err := yaml.Marshal(rel.Values)
				if err != nil {
					t.Fatal(err)
				}
				vf := filepath.Join(t.TempDir(), "values.yaml")
				if err := os.WriteFile(vf, vals, 0o600); err != nil {
					t.Fatal(err)
				}
				chartPath := r.Chart
				if !filepath.IsAbs(chartPath) {
					chartPath = filepath.Join(ls.Stack.Dir, chartPath)
				}
				cmd := exec.Command(helm, "template", r.Name, chartPath, "--namespace", r.Namespace, "-f", vf, "--include-crds")
				cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("helm: %v\n%s", err, stderr.String())
				}
				code, out, errOut := runConvoy(t, "render", "-C", dir, "--release", r.Addr.String(), "--include-crds")
				if code != 0 {
					t.Fatalf("convoy render: exit %d: %s", code, errOut)
				}
				if out != stdout.String() {
					t.Fatalf("output differs from helm template\n--- helm\n%s\n--- convoy\n%s", stdout.String(), out)
				}
			})
		}
	}
}

func TestRenderWholeStack(t *testing.T) {
	dir := "../../examples/shop"
	code, out, errOut := runConvoy(t, "render", "-C", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	ls, err := loadOrdered(context.Background(), run.Source{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var headers []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "# Release: ") {
			headers = append(headers, line)
		}
	}
	if len(headers) != len(ls.Stack.Releases) {
		t.Fatalf("got %d release headers, want %d:\n%s", len(headers), len(ls.Stack.Releases), strings.Join(headers, "\n"))
	}
	for i, r := range ls.Stack.Releases {
		if want := "# Release: " + r.Name + " (" + r.Namespace + ")"; headers[i] != want {
			t.Errorf("header %d = %q, want %q", i, headers[i], want)
		}
		_, single, _ := runConvoy(t, "render", "-C", dir, "--release", r.Addr.String())
		if !strings.Contains(out, headers[i]+"\n"+single) {
			t.Errorf("stack output does not contain %s's single-release output after its header", r.Addr)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	code, _, errOut := runConvoy(t, "render", "-C", "../../examples/shop", "--release", "nope")
	if code != 1 || !strings.Contains(errOut, `Error: no release "nope" in the stack`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, _, errOut = runConvoy(t, "render", "-C", "../../examples/shop", "--kube-version", "x.y")
	if code != 1 || !strings.Contains(errOut, "Error: invalid kube version 'x.y'") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// --out-dir, and helm template's name for it, --output-dir.
func TestRenderOutDir(t *testing.T) {
	for _, flag := range []string{"--out-dir", "--output-dir"} {
		out := t.TempDir()
		code, stdout, errOut := runConvoy(t, "render", "-C", "../../examples/shop", flag, out)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", flag, code, errOut)
		}
		if !strings.Contains(stdout, "wrote "+filepath.Join(out, "db", "postgres", "templates")) {
			t.Fatalf("%s: stdout: %s", flag, stdout)
		}
		data, err := os.ReadFile(filepath.Join(out, "db", "postgres", "templates", "service.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), "---\n# Source: postgres/templates/service.yaml\n") {
			t.Fatalf("%s: file content: %s", flag, data)
		}
	}
}

// A release whose values read another release's outputs renders with what
// that release has deployed (its revision and live objects); before it is
// deployed, render says which dependency is missing.
func TestRenderReadsDeployedOutputs(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "db" {
  chart  = %[1]q
  values = [{ message = "from-db" }]
}
release "reader" {
  chart  = %[1]q
  values = [{ message = "db r${release.db.revision} says ${release.db.resources["v1/ConfigMap/db-config"].data.message}" }]
}
`, appChart(t), ns))
	code, out, errOut := runConvoy(t, "render", "-C", dir, "--kubeconfig", kc, "--release", "release.reader")
	if code != 1 || !strings.Contains(errOut, `release.db (no deployed revision of release "db" in namespace "`+ns+`")`) {
		t.Fatalf("render before db is deployed: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress", "--target", "release.db"); code != 0 {
		t.Fatalf("apply db: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runConvoy(t, "render", "-C", dir, "--kubeconfig", kc, "--release", "release.reader")
	if code != 0 || !strings.Contains(out, `message: "db r1 says from-db"`) {
		t.Fatalf("render with db deployed: exit %d\n%s\n%s", code, out, errOut)
	}
}
