package run_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/run"
)

// A values.schema.json violation is a diagnostic at the value that breaks
// the schema, wherever the release's values set it (internal/stack/provenance):
// the key's line and column in a values file (a key merged in with <<
// where it comes from) or in a heredoc, the item of a values object or of
// set, a set not written literally as a whole, a property an object may
// not have; an object lacking a required key at the first leaf in it of
// the last word setting any; what
// only the chart's defaults set at the values attribute. Before
// provenance, the heredoc's violation was at the whole heredoc and the
// merged key's at the values attribute.
func TestSchemaViolationIsAtTheValueThatBreaksIt(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("chart/Chart.yaml", "apiVersion: v2\nname: app\nversion: 0.1.0\n")
	write("chart/values.yaml", "replicas: 1\nmode: fast\n")
	write("chart/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n")
	write("chart/values.schema.json", `{
  "type": "object",
  "properties": {
    "replicas": {"type": "integer"},
    "mode": {"enum": ["fast", "slow"]},
    "image": {"type": "object", "required": ["tag"], "properties": {"tag": {"type": "string"}}},
    "probe": {"type": "object", "additionalProperties": false, "properties": {"path": {"type": "string"}}}
  }
}`)
	// chart2's own default breaks its schema.
	write("chart2/Chart.yaml", "apiVersion: v2\nname: app2\nversion: 0.1.0\n")
	write("chart2/values.yaml", "replicas: many\n")
	write("chart2/values.schema.json", `{"properties": {"replicas": {"type": "integer"}}}`)
	write("values/file.yaml", "# the file\nname: x\nreplicas: many\n")
	write("values/merge.yaml", "base: &base\n  replicas: many\n<<: *base\n")
	write("values/image.yaml", "image:\n  pull: Always\n")
	write("stack.hcl", `stack "s" {}

release "file" {
  chart  = "./chart"
  values = [{ replicas = 2 }, file("values/file.yaml")]
}

release "merge" {
  chart  = "./chart"
  values = [file("values/merge.yaml")]
}

release "heredoc" {
  chart  = "./chart"
  values = [<<-EOT
    name: x
    replicas: many
  EOT
  ]
}

release "object" {
  chart  = "./chart"
  values = [{ image = { tag = 5 } }]
}

release "set" {
  chart = "./chart"
  set   = { "replicas" = "many" }
}

release "required" {
  chart  = "./chart"
  values = [{ image = { name = "x" } }, file("values/image.yaml")]
}

release "defaults" {
  chart  = "./chart2"
  values = [{ name = "x" }]
}

locals {
  set = { "replicas" = "many" }
}

release "setlocal" {
  chart = "./chart"
  set   = local.set
}

release "extra" {
  chart  = "./chart"
  values = [{ probe = { path = "/", port = 80 } }]
}
`)
	_, err := runValidate(t.Context(), run.Options{Source: run.Source{Dir: dir}, ChartCache: t.TempDir()})
	var de *run.DiagnosticsError
	if !errors.As(err, &de) {
		t.Fatalf("validate: %v", err)
	}
	got := map[string]string{} // release → file:line:col and the text underlined
	for _, d := range de.Diags {
		addr, _, _ := strings.Cut(d.Detail, ":")
		if d.Subject == nil {
			t.Errorf("%s: no subject", d.Detail)
			continue
		}
		rel, err := filepath.Rel(dir, d.Subject.Filename)
		if err != nil {
			rel = d.Subject.Filename
		}
		text, err := os.ReadFile(d.Subject.Filename)
		if err != nil {
			t.Fatal(err)
		}
		got[addr] = fmt.Sprintf("%s:%d:%d %s", rel, d.Subject.Start.Line, d.Subject.Start.Column, text[d.Subject.Start.Byte:d.Subject.End.Byte])
	}
	for addr, want := range map[string]string{
		"release.file":     "values/file.yaml:3:1 replicas: many",
		"release.merge":    "values/merge.yaml:2:3 replicas: many",
		"release.heredoc":  "stack.hcl:17:5 replicas: many",
		"release.object":   "stack.hcl:24:25 tag = 5",
		"release.set":      `stack.hcl:29:13 "replicas" = "many"`,
		"release.required": "values/image.yaml:2:3 pull: Always",
		"release.defaults": `stack.hcl:39:12 [{ name = "x" }]`,
		"release.setlocal": "stack.hcl:48:11 local.set",
		"release.extra":    "stack.hcl:53:37 port = 80",
	} {
		if got[addr] != want {
			t.Errorf("%s: at %q, want %q", addr, got[addr], want)
		}
	}
	if len(got) != 9 || t.Failed() {
		for _, d := range de.Diags {
			t.Logf("%s: %s", d.Subject, d.Detail)
		}
	}
}

// A schema violation in a values file is named as the stack's HCL files
// are: under the stack directory as the run was given it, not by its
// absolute path (issue 55, item 11).
func TestSchemaViolationNamesTheFileAsTheStackIsGiven(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "shop")
	for name, text := range map[string]string{
		"chart/Chart.yaml":         "apiVersion: v2\nname: app\nversion: 0.1.0\n",
		"chart/values.yaml":        "replicas: 1\n",
		"chart/values.schema.json": `{"properties": {"replicas": {"type": "integer"}}}`,
		"values/web.yaml":          "replicas: many\n",
		"stack.hcl":                "stack \"s\" {}\n\nrelease \"web\" {\n  chart  = \"./chart\"\n  values = [file(\"values/web.yaml\")]\n}\n\nrelease \"api\" {\n  chart = \"./chart\"\n  set   = { \"replicas\" = \"many\" }\n}\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(parent)
	_, err := runValidate(t.Context(), run.Options{Source: run.Source{Dir: "shop"}, ChartCache: t.TempDir()})
	var de *run.DiagnosticsError
	if !errors.As(err, &de) {
		t.Fatalf("validate: %v", err)
	}
	got := map[string]string{}
	for _, d := range de.Diags {
		addr, _, _ := strings.Cut(d.Detail, ":")
		got[addr] = d.Subject.Filename
	}
	want := map[string]string{"release.web": filepath.Join("shop", "values", "web.yaml"), "release.api": filepath.Join("shop", "stack.hcl")}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("diagnostics in %v, want %v", got, want)
	}
	if _, ok := de.Files[want["release.api"]]; !ok {
		t.Errorf("the stack's files are not named as its diagnostics are: %v", de.Files)
	}
}
