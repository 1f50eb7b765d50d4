package provenance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// writeFiles writes files (by slash path) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// evalDir loads and evaluates the stack in dir with its auto vars files
// and the given values.
func evalDir(t testing.TB, dir string, given ...config.RawValue) *config.Stack {
	t.Helper()
	cfg, diags := config.LoadDir(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	auto, diags := config.ReadAutoVarFiles(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	st, diags := config.Evaluate(context.Background(), cfg, config.EvalOptions{Variables: append(auto, given...)})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return st
}

const appChart = `apiVersion: v2
name: app
version: 0.1.0
`

// appValues: the chart's defaults (line numbers matter).
const appValues = `replicas: 1
image:
  repository: app
  tag: "1.0"
labels:
  team: core
env:
  LOG: info
service:
  port: 80
auth:
  password: ""
extra: 1
`

// stackHCL: the stack (line and column numbers matter).
const stackHCL = `variable "replicas" {
  type    = number
  default = 1
}
variable "tag" {
  type = string
}
variable "log" {
  default = "info"
}
variable "token" {
  sensitive = true
}
locals {
  image_tag = "v${var.tag}"
}
release "app" {
  chart = "./charts/app"
  values = [
    file("values/prod.yaml"),
    {
      replicas = var.replicas
      image    = { tag = local.image_tag }
      env      = { LOG = var.log }
    },
    <<-EOT
      inline: true
    EOT
    ,
    "quoted: true",
  ]
  set           = { "service.port" = 8080 }
  set_sensitive = { "auth.password" = var.token }
}
`

const prodValues = `replicas: 2
labels:
  tier: web
image:
  tag: "1.1"
extra: null
`

func src(file string, line, col int) *plan.Source {
	return &plan.Source{File: file, Line: line, Column: col}
}

// stackOrigins evaluates the stack of stackHCL as `convoy plan
// --var tag=1.5 --var-file secret.vars.hcl` with CONVOY_VAR_log=debug
// and prod.auto.vars.hcl would, and returns the origins of its release's
// values, and the --var-file's path.
func stackOrigins(t *testing.T) (map[string]plan.Origin, string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"stack.hcl":                    stackHCL,
		"prod.auto.vars.hcl":           "replicas = 5\n",
		"values/prod.yaml":             prodValues,
		"charts/app/Chart.yaml":        appChart,
		"charts/app/values.yaml":       appValues,
		"charts/app/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
	})
	secret := filepath.Join(t.TempDir(), "secret.vars.hcl")
	writeFiles(t, filepath.Dir(secret), map[string]string{"secret.vars.hcl": "token = \"s3cr3t-value\"\n"})
	varFile, diags := config.ReadVarFile(secret)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	flag, diags := config.ParseVarArg("tag=1.5")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	given := append(config.RawValues{varFile, flag}, config.EnvVarValues([]string{"CONVOY_VAR_log=debug"})...)
	st := evalDir(t, dir, given...)
	inst := st.Releases[0]
	ch, err := chart.Load(filepath.Join(dir, "charts/app"))
	if err != nil {
		t.Fatal(err)
	}
	origins, err := Values(st, inst, ch)
	if err != nil {
		t.Fatal(err)
	}
	return origins, secret
}

func TestValuesLeavesNameWhereTheyWereSet(t *testing.T) {
	origins, secret := stackOrigins(t)
	chartDefault := func(line int) plan.Origin {
		return plan.Origin{Kind: plan.OriginChartDefault, Source: src("charts/app/values.yaml", line, 3)}
	}
	varTag := plan.Origin{Input: "var.tag", Kind: plan.OriginVariable, Source: src("stack.hcl", 5, 1), Via: []plan.Origin{
		{Input: "var.tag", Kind: plan.OriginFlag, Source: &plan.Source{Flag: "--var tag=…"}},
	}}
	for _, tc := range []struct {
		path string
		want plan.Origin
	}{{
		// From a variable set in an auto vars file, over a values file
		// over the chart's default.
		path: "replicas",
		want: plan.Origin{Kind: plan.OriginValues, Source: src("stack.hcl", 22, 7),
			Via: []plan.Origin{{Input: "var.replicas", Kind: plan.OriginVariable, Source: src("stack.hcl", 1, 1), Via: []plan.Origin{
				{Input: "var.replicas", Kind: plan.OriginAutoVarFile, Source: src("prod.auto.vars.hcl", 1, 12)},
			}}},
			Overrode: []plan.Origin{
				{Kind: plan.OriginChartDefault, Source: src("charts/app/values.yaml", 1, 1)},
				{Kind: plan.OriginValuesFile, Source: src("values/prod.yaml", 1, 1), Via: []plan.Origin{}},
			}},
	}, {
		// Through a local, from --var.
		path: "image.tag",
		want: plan.Origin{Kind: plan.OriginValues, Source: src("stack.hcl", 23, 20),
			Via:      []plan.Origin{{Input: "local.image_tag", Kind: plan.OriginLocal, Source: src("stack.hcl", 15, 3), Via: []plan.Origin{varTag}}},
			Overrode: []plan.Origin{chartDefault(4), {Kind: plan.OriginValuesFile, Source: src("values/prod.yaml", 5, 3), Via: []plan.Origin{}}}},
	}, {
		path: "image.repository",
		want: chartDefault(3),
	}, {
		path: "labels.team",
		want: chartDefault(6),
	}, {
		// A null that deletes a default.
		path: "extra",
		want: plan.Origin{Kind: plan.OriginValuesFile, Source: src("values/prod.yaml", 6, 1), Via: []plan.Origin{},
			Overrode: []plan.Origin{{Kind: plan.OriginChartDefault, Source: src("charts/app/values.yaml", 13, 1)}}},
	}, {
		path: "labels.tier",
		want: plan.Origin{Kind: plan.OriginValuesFile, Source: src("values/prod.yaml", 3, 3), Via: []plan.Origin{}},
	}, {
		// From CONVOY_VAR_log.
		path: "env.LOG",
		want: plan.Origin{Kind: plan.OriginValues, Source: src("stack.hcl", 24, 20),
			Via: []plan.Origin{{Input: "var.log", Kind: plan.OriginVariable, Source: src("stack.hcl", 8, 1), Via: []plan.Origin{
				{Input: "var.log", Kind: plan.OriginEnv, Source: &plan.Source{Env: "CONVOY_VAR_log"}},
			}}},
			Overrode: []plan.Origin{chartDefault(8)}},
	}, {
		// YAML written in the stack file: in a heredoc, the key's line;
		// else the layer.
		path: "inline",
		want: plan.Origin{Kind: plan.OriginValues, Source: src("stack.hcl", 27, 7), Via: []plan.Origin{}},
	}, {
		path: "quoted",
		want: plan.Origin{Kind: plan.OriginValues, Source: src("stack.hcl", 30, 5), Via: []plan.Origin{}},
	}, {
		path: "service.port",
		want: plan.Origin{Kind: plan.OriginSet, Source: src("stack.hcl", 32, 21), Overrode: []plan.Origin{chartDefault(10)}},
	}, {
		// Sensitive, from a --var-file: the source is named.
		path: "auth.password",
		want: plan.Origin{Kind: plan.OriginSetSensitive, Source: src("stack.hcl", 33, 21),
			Via: []plan.Origin{{Input: "var.token", Kind: plan.OriginVariable, Source: src("stack.hcl", 11, 1), Via: []plan.Origin{
				{Input: "var.token", Kind: plan.OriginVarFile, Source: src(secret, 1, 9)},
			}}},
			Overrode: []plan.Origin{chartDefault(12)}},
	}} {
		t.Run(tc.path, func(t *testing.T) {
			want := tc.want
			want.Input = "values " + tc.path
			for i := range want.Overrode {
				want.Overrode[i].Input = want.Input
			}
			got, ok := origins[tc.path]
			if !ok {
				t.Fatalf("no origin for %s", tc.path)
			}
			if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
				t.Errorf("origin of %s:\n got %s\nwant %s", tc.path, g, w)
			}
		})
	}
	if len(origins) != 11 {
		t.Errorf("%d leaves, want 11: %v", len(origins), keys(origins))
	}
}

func TestValuesOriginsHoldNoValue(t *testing.T) {
	origins, _ := stackOrigins(t)
	all := jsonOf(t, origins)
	for _, v := range []string{"s3cr3t", "v1.5", "debug"} {
		if strings.Contains(all, v) {
			t.Errorf("the origins hold the value %q: %s", v, all)
		}
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func keys(m map[string]plan.Origin) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
