package chart

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// parityCase is one entry of testdata/cases.yaml: a `helm template` call.
type parityCase struct {
	Name        string   `json:"name"`
	Chart       string   `json:"chart"` // under testdata/charts; "x.tgz" is packed from dir x at test time
	Release     string   `json:"release"`
	Namespace   string   `json:"namespace"`
	Values      []string `json:"values"` // under testdata/values
	Set         []string `json:"set"`
	SetString   []string `json:"setString"`
	KubeVersion string   `json:"kubeVersion"`
	APIVersions []string `json:"apiVersions"`
	IncludeCRDs bool     `json:"includeCRDs"`
	IsUpgrade   bool     `json:"isUpgrade"`
	// WantError documents that helm fails on this case; the test checks it.
	WantError bool `json:"wantError"`
	// UnorderedError compares error lines as a multiset: helm prints
	// several schema violations in Go map order, which varies per run
	// (convoy sorts them).
	UnorderedError bool `json:"unorderedError"`
}

func loadCases(t testing.TB) []parityCase {
	t.Helper()
	data, err := os.ReadFile("testdata/cases.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []parityCase
	if err := yaml.UnmarshalStrict(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// helmBinary finds the oracle: $CONVOY_HELM, else the tools cache.
func helmBinary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the helm oracle: run without -short (make test)")
	}
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

// chartPath resolves a case's chart, packing "x.tgz" from testdata/charts/x.
func chartPath(t testing.TB, c parityCase) string {
	t.Helper()
	p := filepath.Join("testdata", "charts", c.Chart)
	if dir, ok := strings.CutSuffix(p, ".tgz"); ok {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		out := filepath.Join(t.TempDir(), filepath.Base(p))
		if err := packDir(dir, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	return p
}

type helmResult struct {
	stdout string
	errMsg string // text after "Error: ", "" on success
}

func runHelm(t testing.TB, helm string, c parityCase, chart string) helmResult {
	t.Helper()
	args := []string{"template", c.release(), chart, "--namespace", c.namespace()}
	for _, v := range c.Values {
		args = append(args, "-f", filepath.Join("testdata", "values", v))
	}
	for _, s := range c.Set {
		args = append(args, "--set", s)
	}
	for _, s := range c.SetString {
		args = append(args, "--set-string", s)
	}
	if c.KubeVersion != "" {
		args = append(args, "--kube-version", c.KubeVersion)
	}
	for _, a := range c.APIVersions {
		args = append(args, "--api-versions", a)
	}
	if c.IncludeCRDs {
		args = append(args, "--include-crds")
	}
	if c.IsUpgrade {
		args = append(args, "--is-upgrade")
	}
	cmd := exec.Command(helm, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := helmResult{stdout: stdout.String()}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running helm: %v", err)
		}
		s := stderr.String()
		i := strings.Index(s, "Error: ")
		if i < 0 {
			t.Fatalf("helm failed without an Error line: %s", s)
		}
		res.errMsg = strings.TrimSuffix(s[i+len("Error: "):], "\n")
	}
	return res
}

func (c parityCase) release() string {
	if c.Release == "" {
		return "rel"
	}
	return c.Release
}

func (c parityCase) namespace() string {
	if c.Namespace == "" {
		return "default"
	}
	return c.Namespace
}

// renderCase renders a case with convoy the way `helm template` would,
// returning stdout or the error text helm would print.
func renderCase(c parityCase, chart string) (string, error) {
	var layers []map[string]any
	for _, v := range c.Values {
		p := filepath.Join("testdata", "values", v)
		data, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		m, err := ParseValues(data)
		if err != nil {
			return "", fmt.Errorf("failed to parse %s: %w", p, err)
		}
		layers = append(layers, m)
	}
	user, err := UserValues(layers, c.Set)
	if err != nil {
		return "", err
	}
	for _, s := range c.SetString {
		if err := ParseSetString(s, user); err != nil {
			return "", fmt.Errorf("failed parsing --set-string data: %w", err)
		}
	}
	if c.KubeVersion != "" {
		if _, err := ParseKubeVersion(c.KubeVersion); err != nil {
			return "", fmt.Errorf("invalid kube version '%s': %w", c.KubeVersion, err)
		}
	}
	ch, err := Load(chart)
	if err != nil {
		return "", err
	}
	action := ActionInstall
	if c.IsUpgrade {
		action = ActionUpgrade
	}
	r, err := Render(ch, RenderOptions{
		ReleaseName: c.release(),
		Namespace:   c.namespace(),
		Action:      action,
		KubeVersion: c.KubeVersion,
		APIVersions: c.APIVersions,
		UserValues:  user,
	})
	if err != nil {
		return "", errors.New(HelmTemplateMessage(err))
	}
	return r.TemplateOutput(c.IncludeCRDs), nil
}

func TestParity(t *testing.T) {
	helm := helmBinary(t)
	for _, c := range loadCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			chart := chartPath(t, c)
			want := runHelm(t, helm, c, chart)
			got, err := renderCase(c, chart)
			if (want.errMsg != "") != c.WantError {
				t.Errorf("case file says wantError=%v but helm error is %q", c.WantError, want.errMsg)
			}
			if want.errMsg != "" {
				if err == nil {
					t.Fatalf("helm failed with %q, convoy succeeded", want.errMsg)
				}
				if c.UnorderedError && sortedLines(err.Error()) == sortedLines(want.errMsg) {
					return
				}
				// helm prints every level of a runaway recursion; convoy
				// leaves out the middle of the chain (shortenNested).
				if err.Error() != want.errMsg && err.Error() != shortenHelmMessage(want.errMsg) {
					t.Fatalf("error text differs\nhelm:   %q\nconvoy: %q", want.errMsg, err.Error())
				}
				return
			}
			if err != nil {
				t.Fatalf("helm succeeded, convoy failed: %v", err)
			}
			if got != want.stdout {
				t.Fatalf("output differs:\n%s", lineDiff(want.stdout, got))
			}
		})
	}
}

// lineDiff shows the first differing lines with some context.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			lo := max(0, i-3)
			var b strings.Builder
			fmt.Fprintf(&b, "first difference at line %d\n", i+1)
			for j := lo; j < i; j++ {
				fmt.Fprintf(&b, "  %s\n", w[j])
			}
			fmt.Fprintf(&b, "- helm:   %q\n+ convoy: %q\n", wl, gl)
			return b.String()
		}
	}
	return "identical"
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestParitySetExpressions runs every line of testdata/set-expressions.txt
// as --set flags through helm and convoy (chart testdata/charts/dump, which
// prints the values with their types) and requires identical output or
// identical error text.
func TestParitySetExpressions(t *testing.T) {
	helm := helmBinary(t)
	data, err := os.ReadFile("testdata/set-expressions.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		t.Run(line, func(t *testing.T) {
			c := parityCase{Name: line, Chart: "dump", Set: strings.Split(line, " ;; ")}
			chart := chartPath(t, c)
			want := runHelm(t, helm, c, chart)
			got, err := renderCase(c, chart)
			switch {
			case want.errMsg != "":
				if err == nil || err.Error() != want.errMsg {
					t.Fatalf("helm error %q, convoy %v", want.errMsg, err)
				}
			case err != nil:
				t.Fatalf("helm succeeded, convoy failed: %v", err)
			case got != want.stdout:
				t.Fatalf("output differs:\n%s", lineDiff(want.stdout, got))
			}
		})
	}
}

// shortenHelmMessage is helm's error text with its template message
// shortened as convoy shortens it (shortenNested), the suffix helm adds
// kept.
func shortenHelmMessage(msg string) string {
	const debug = "\n\nUse --debug flag to render out invalid YAML"
	if body, ok := strings.CutSuffix(msg, debug); ok {
		return shortenNested(body) + debug
	}
	return shortenNested(msg)
}
