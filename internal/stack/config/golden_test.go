package config

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testEnv is the environment every golden stack is evaluated with.
var testEnv = []string{"CONVOY_VAR_db_password=s3cret-from-env", "HOME=/home/test", "CONVOY_VAR_other_stack=ignored"}

// modelJSON renders an evaluated stack as the JSON stored in golden files.
// Sensitive values are masked, so the golden files also prove that secrets
// never reach output.
func modelJSON(t *testing.T, s *Stack) []byte {
	t.Helper()
	type layer struct {
		Kind  string      `json:"kind"`
		Value interface{} `json:"value"`
	}
	type release struct {
		Addr            string                 `json:"addr"`
		Name            string                 `json:"name"`
		Namespace       string                 `json:"namespace"`
		CreateNamespace bool                   `json:"create_namespace"`
		Chart           string                 `json:"chart"`
		ChartSource     string                 `json:"chart_source"`
		Repository      string                 `json:"repository,omitempty"`
		Version         string                 `json:"version,omitempty"`
		Values          []layer                `json:"values,omitempty"`
		Set             map[string]interface{} `json:"set,omitempty"`
		SetSensitive    map[string]interface{} `json:"set_sensitive,omitempty"`
		Wait            bool                   `json:"wait"`
		WaitForJobs     bool                   `json:"wait_for_jobs"`
		Timeout         string                 `json:"timeout"`
		Atomic          bool                   `json:"atomic"`
		CleanupOnFail   bool                   `json:"cleanup_on_fail"`
		HistoryMax      int                    `json:"history_max"`
		DisableHooks    bool                   `json:"disable_hooks"`
		TakeOwnership   bool                   `json:"take_ownership"`
		Labels          map[string]string      `json:"labels,omitempty"`
		Cluster         string                 `json:"cluster,omitempty"`
		DependsOn       []string               `json:"depends_on,omitempty"`
		Known           bool                   `json:"known"`
		Decl            string                 `json:"decl"`
	}
	type model struct {
		Name             string                 `json:"name"`
		DefaultNamespace string                 `json:"default_namespace"`
		Atomic           bool                   `json:"atomic"`
		Clusters         map[string]interface{} `json:"clusters,omitempty"`
		Repositories     map[string]interface{} `json:"repositories,omitempty"`
		Releases         []release              `json:"releases"`
	}
	m := model{Name: s.Name, DefaultNamespace: s.DefaultNamespace, Atomic: s.Atomic, Repositories: map[string]interface{}{}}
	if len(s.Clusters) > 0 {
		m.Clusters = map[string]interface{}{}
		for k, c := range s.Clusters {
			m.Clusters[k] = map[string]string{"kubeconfig": c.Kubeconfig, "context": c.Context}
		}
	}
	for k, r := range s.Repositories {
		m.Repositories[k] = map[string]interface{}{"url": r.URL, "oci": r.OCI, "username": r.Username, "password": DisplayValue(r.Password)}
	}
	for _, ri := range s.Releases {
		r := release{
			Addr: ri.Addr.String(), Name: ri.Name, Namespace: ri.Namespace, CreateNamespace: ri.CreateNamespace,
			Chart: ri.Chart, ChartSource: ri.ChartSource.String(), Version: ri.Version,
			Wait: ri.Wait, WaitForJobs: ri.WaitForJobs, Timeout: ri.Timeout.String(), Atomic: ri.Atomic,
			CleanupOnFail: ri.CleanupOnFail, HistoryMax: ri.HistoryMax, DisableHooks: ri.DisableHooks,
			TakeOwnership: ri.TakeOwnership, Labels: ri.Labels, Known: ri.Known,
			Decl: fmt.Sprintf("%s:%d", filepath.Base(ri.DeclRange.Filename), ri.DeclRange.Start.Line),
		}
		if ri.Repository != nil {
			r.Repository = ri.Repository.Name
		}
		if ri.Cluster != nil {
			r.Cluster = ri.Cluster.Name
		}
		for _, l := range ri.Values {
			r.Values = append(r.Values, layer{Kind: l.Kind.String(), Value: DisplayValue(l.Value)})
		}
		for _, p := range []struct {
			src map[string]cty.Value
			dst *map[string]interface{}
		}{{ri.Set, &r.Set}, {ri.SetSensitive, &r.SetSensitive}} {
			if p.src == nil {
				continue
			}
			*p.dst = map[string]interface{}{}
			for k, v := range p.src {
				(*p.dst)[k] = DisplayValue(v)
			}
		}
		for _, d := range ri.DependsOn {
			r.DependsOn = append(r.DependsOn, fmt.Sprintf("%s (%s:%d)", d.Addr, filepath.Base(d.Range.Filename), d.Range.Start.Line))
		}
		m.Releases = append(m.Releases, r)
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// formatDiags renders diagnostics one per line as file:line:col: severity:
// summary: detail, with file names relative to the stack directory.
func formatDiags(dir string, diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		loc := "-"
		if d.Subject != nil {
			name := d.Subject.Filename
			if rel, err := filepath.Rel(dir, name); err == nil && !strings.HasPrefix(rel, "..") {
				name = rel
			}
			loc = fmt.Sprintf("%s:%d:%d", name, d.Subject.Start.Line, d.Subject.Start.Column)
		}
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		fmt.Fprintf(&b, "%s: %s: %s: %s\n", loc, sev, d.Summary, strings.ReplaceAll(d.Detail, "\n", " "))
	}
	return b.String()
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (run with -update to accept):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

func subdirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// TestValidStacks evaluates every stack under testdata/valid and compares
// the model with <stack>.golden.json.
func TestValidStacks(t *testing.T) {
	for _, name := range subdirs(t, "testdata/valid") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata/valid", name)
			cfg, diags := LoadDir(dir)
			if diags.HasErrors() {
				t.Fatalf("load:\n%s", formatDiags(dir, diags))
			}
			stack, diags := evaluateAsRun(cfg, EvalOptions{Variables: EnvVarValues(testEnv)})
			if diags.HasErrors() {
				t.Fatalf("evaluate:\n%s", formatDiags(dir, diags))
			}
			if len(diags) > 0 {
				t.Errorf("unexpected warnings:\n%s", formatDiags(dir, diags))
			}
			compareGolden(t, filepath.Join("testdata/valid", name+".golden.json"), modelJSON(t, stack))
		})
	}
}

// TestInvalidStacks loads and evaluates every stack under testdata/invalid
// and compares all its diagnostics with <stack>.golden.txt.
func TestInvalidStacks(t *testing.T) {
	for _, name := range subdirs(t, "testdata/invalid") {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata/invalid", name)
			diags := loadAndEvaluate(dir, EvalOptions{Variables: EnvVarValues(testEnv)})
			if !diags.HasErrors() {
				t.Fatalf("expected errors, got none")
			}
			compareGolden(t, filepath.Join("testdata/invalid", name+".golden.txt"), []byte(formatDiags(dir, diags)))
		})
	}
}

func loadAndEvaluate(dir string, opts EvalOptions) hcl.Diagnostics {
	cfg, diags := LoadDir(dir)
	if diags.HasErrors() {
		return diags
	}
	_, d := evaluateAsRun(cfg, opts)
	return append(diags, d...)
}
