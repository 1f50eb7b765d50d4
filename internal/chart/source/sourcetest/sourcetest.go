// Package sourcetest runs the real parts chart-source tests need: an HTTP
// chart repository in the test process serving archives and an index made
// by the helm oracle (`helm package`, `helm repo index`), and a
// distribution registry (hack/build-tools.sh registry) with charts pushed by
// `helm push`. Both count the requests they serve, so tests can assert that
// a step made none. Missing tools fail the test; under -short (no built
// tools) a test that needs one skips.
package sourcetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/devcluster"
)

// Helm runs the helm oracle with an isolated home (and registry config in
// it) and returns stdout; a failure fails the test.
func Helm(t testing.TB, home string, args ...string) string {
	t.Helper()
	skipShort(t, "the helm oracle")
	bin, err := devcluster.LocateHelm(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+home+"/config", "HELM_CACHE_HOME="+home+"/cache", "HELM_DATA_HOME="+home+"/data",
		"HELM_REGISTRY_CONFIG="+home+"/registry.json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// skipShort skips t under -short, which runs the tests that need no
// built tool.
func skipShort(t testing.TB, needs string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s: run without -short (make test)", needs)
	}
}

// WriteChart writes a minimal chart directory: one ConfigMap named after
// the release that records the chart's version (so a version change shows
// in a plan), plus the given Chart.yaml dependencies block, if any.
func WriteChart(t testing.TB, dir, name, version, dependencies string) string {
	t.Helper()
	root := filepath.Join(dir, name)
	files := map[string]string{
		"Chart.yaml":  fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\nappVersion: %q\n%s", name, version, version, dependencies),
		"values.yaml": "greeting: hello\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-{{ .Chart.Name }}
data:
  chartVersion: {{ .Chart.Version | quote }}
  greeting: {{ .Values.greeting | quote }}
`,
	}
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Package packages a minimal chart of name and version with the helm
// oracle into outDir and returns the archive's path.
func Package(t testing.TB, outDir, name, version string) string {
	t.Helper()
	return PackageWithDeps(t, outDir, name, version, "")
}

// PackageWithDeps is Package with a Chart.yaml dependencies block whose
// charts are not vendored under charts/.
func PackageWithDeps(t testing.TB, outDir, name, version, dependencies string) string {
	t.Helper()
	src := t.TempDir()
	dir := WriteChart(t, src, name, version, dependencies)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	Helm(t, t.TempDir(), "package", dir, "--destination", outDir)
	return filepath.Join(outDir, fmt.Sprintf("%s-%s.tgz", name, version))
}
