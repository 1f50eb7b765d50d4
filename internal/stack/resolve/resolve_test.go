package resolve

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

func evalStack(t *testing.T, src string) *config.Stack {
	t.Helper()
	cfg, diags := config.LoadSources(t.TempDir(), map[string][]byte{"stack.hcl": []byte(src)})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	st, diags := config.Evaluate(context.Background(), cfg, config.EvalOptions{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return st
}

func TestValuesLayersAndSets(t *testing.T) {
	st := evalStack(t, `
variable "pw" {
  default   = "s3cr3t,x"
  sensitive = true
}
release "db" {
  chart = "./charts/db"
  values = [
    "replicas: 2\nimage:\n  tag: \"1.0\"\nlist: [1, 2]\n",
    { image = { tag = "1.1" }, list = [3] },
  ]
  set = {
    "port"               = 5432
    "zip"                = "0123"
    "enabled"            = false
    "a\\.b"              = "dotted"
    "nested.deep.key"    = "v"
    "gone"               = null
  }
  set_sensitive = { "auth.password" = var.pw }
}
`)
	got, sensitive, err := Values(st.Releases[0])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"replicas": float64(2), // a YAML layer parses as helm -f does
		"image":    map[string]any{"tag": "1.1"},
		"list":     []any{int64(3)}, // lists replace
		"port":     int64(5432),
		"zip":      "0123", // strings are never re-typed
		"enabled":  false,
		"a.b":      "dotted",
		"nested":   map[string]any{"deep": map[string]any{"key": "v"}},
		"gone":     nil,
		"auth":     map[string]any{"password": "s3cr3t,x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("values:\n got %#v\nwant %#v", got, want)
	}
	if !sensitive {
		t.Fatal("set_sensitive value not reported as sensitive")
	}
}

func TestValuesNotSensitiveWithoutSensitiveInputs(t *testing.T) {
	st := evalStack(t, `
release "web" {
  chart  = "./charts/web"
  values = [{ a = 1 }]
}
`)
	_, sensitive, err := Values(st.Releases[0])
	if err != nil || sensitive {
		t.Fatalf("sensitive=%v err=%v", sensitive, err)
	}
}

func TestRepositoryChartsAreReportedUnsupported(t *testing.T) {
	st := evalStack(t, `
repository "prom" {
  url = "https://example.invalid/charts"
}
release "mon" {
  chart = "prom/prometheus"
}
`)
	_, err := NewCharts(t.TempDir()).Load(st.Dir, st.Releases[0])
	if err == nil {
		t.Fatal("a repository chart loaded although chart sources are not implemented")
	}
}

func TestLocalChartsLoadOnceAndAreShared(t *testing.T) {
	st := evalStack(t, `
release "a" {
  count = 4
  chart = "./charts/app"
}
release "broken" {
  count = 2
  chart = "./charts/missing"
}
`)
	chartDir := filepath.Join(st.Dir, "charts", "app")
	if err := os.MkdirAll(chartDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chartDir, "Chart.yaml"), []byte("apiVersion: v2\nname: app\nversion: 1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	charts := NewCharts("")
	got := make([]*chart.Chart, len(st.Releases))
	errs := make([]error, len(st.Releases))
	var wg sync.WaitGroup
	for i, r := range st.Releases {
		wg.Go(func() { got[i], errs[i] = charts.Load(st.Dir, r) })
	}
	wg.Wait()
	for i, r := range st.Releases {
		switch r.Addr.Release.Name {
		case "a":
			if errs[i] != nil || got[i] == nil || got[i] != got[0] {
				t.Errorf("%s: %p %v; want the one shared chart %p", r.Addr, got[i], errs[i], got[0])
			}
		case "broken":
			if errs[i] == nil || !strings.Contains(errs[i].Error(), r.Addr.String()+": load chart ./charts/missing") {
				t.Errorf("%s: %v", r.Addr, errs[i])
			}
		}
	}
}
