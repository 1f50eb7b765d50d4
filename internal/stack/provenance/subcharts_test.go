package provenance

import (
	"path/filepath"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// A chart with an aliased subchart, one disabled, globals, import-values,
// keys that are not identifiers, lists and YAML merge keys; variables
// from an environment block, the controller and a default read through
// for_each; a release attribute.
var subchartFiles = map[string]string{
	"charts/app/Chart.yaml": `apiVersion: v2
name: app
version: 0.1.0
dependencies:
  - name: db
    version: 0.1.0
    alias: primary
    import-values:
      - data
  - name: db
    version: 0.1.0
    alias: spare
    condition: spare.enabled
`,
	"charts/app/values.yaml": `global:
  env: prod
primary:
  port: 6432
spare:
  enabled: false
"b.c": 1
list:
  - a
  - b
base: &base
  x: 1
  y: 2
merged:
  <<: *base
  y: 3
`,
	"charts/app/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
	"charts/app/charts/db/Chart.yaml": `apiVersion: v2
name: db
version: 0.1.0
`,
	"charts/app/charts/db/values.yaml": `port: 5432
user: admin
global:
  region: eu
  env: dev
exports:
  data:
    shared: true
`,
	"charts/app/charts/db/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-db\n",
	"stack.hcl": `variable "env" {
  type = string
}
variable "owner" {
  type = string
}
variable "regions" {
  type    = set(string)
  default = ["eu"]
}
environment "prod" {
  vars = { env = "production" }
}
release "app" {
  chart  = "./charts/app"
  values = [{ global = { env = var.env }, owner = var.owner }]
  set    = { "primary.port" = 7000 }
}
release "worker" {
  for_each = var.regions
  chart    = "./charts/app"
  values   = [{ region = each.value, upstream = release.app.name, stage = environment.name }]
}
`,
}

func TestValuesOfSubchartsAndOtherInputs(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, subchartFiles)
	cfg, diags := config.LoadDir(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	st, diags := config.Evaluate(t.Context(), cfg, config.EvalOptions{
		Environment: "prod",
		Variables:   config.RawValues{config.VariableValue(config.ValueFromCaller, "ConfigMap shop/vars", "owner", "team-a")},
	})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	ch, err := chart.Load(filepath.Join(dir, "charts/app"))
	if err != nil {
		t.Fatal(err)
	}
	var c Cache
	app, err := c.Values(st, st.Releases[0], ch)
	if err != nil {
		t.Fatal(err)
	}
	worker, err := c.Values(st, st.Releases[1], ch)
	if err != nil {
		t.Fatal(err)
	}
	const root, db = "charts/app/values.yaml", "charts/app/charts/db/values.yaml"
	def := func(file string, line, col int) plan.Origin {
		return plan.Origin{Kind: plan.OriginChartDefault, Source: src(file, line, col)}
	}
	varEnv := plan.Origin{Input: "var.env", Kind: plan.OriginVariable, Source: src("stack.hcl", 1, 1), Via: []plan.Origin{
		{Input: "var.env", Kind: plan.OriginEnvironment, Source: src("stack.hcl", 12, 18)},
	}}
	for _, tc := range []struct {
		origins map[string]plan.Origin
		path    string
		want    plan.Origin
	}{
		// The parent's default over the subchart's, set over both.
		{app, "primary.port", plan.Origin{Kind: plan.OriginSet, Source: src("stack.hcl", 17, 14), Overrode: []plan.Origin{def(db, 1, 1), def(root, 4, 3)}}},
		{worker, "primary.port", plan.Origin{Kind: plan.OriginChartDefault, Source: src(root, 4, 3), Overrode: []plan.Origin{def(db, 1, 1)}}},
		{app, "primary.user", def(db, 2, 1)},
		// A subchart's globals: its parent's win.
		{worker, "primary.global.env", plan.Origin{Kind: plan.OriginChartDefault, Source: src(root, 2, 3), Overrode: []plan.Origin{def(db, 5, 3)}}},
		{app, "primary.global.env", plan.Origin{Kind: plan.OriginValues, Source: src("stack.hcl", 16, 26), Via: []plan.Origin{varEnv},
			Overrode: []plan.Origin{def(db, 5, 3), def(root, 2, 3)}}},
		{app, "primary.global.region", def(db, 4, 3)},
		{app, "global.env", plan.Origin{Kind: plan.OriginValues, Source: src("stack.hcl", 16, 26), Via: []plan.Origin{varEnv}, Overrode: []plan.Origin{def(root, 2, 3)}}},
		// import-values: from the subchart's exports.
		{app, "shared", def(db, 8, 5)},
		{app, "primary.exports.data.shared", def(db, 8, 5)},
		// A disabled subchart's condition is a value like any other.
		{app, "spare.enabled", def(root, 6, 3)},
		{app, `["b.c"]`, def(root, 7, 1)},
		{app, "list[1]", def(root, 10, 5)},
		// Merge keys: the anchor's lines, the mapping's own keys win.
		{app, "merged.x", def(root, 12, 3)},
		{app, "merged.true", def(root, 16, 3)},
		// A plain y is true to Helm (YAML 1.1).
		{app, "base.true", def(root, 13, 3)},
		// The controller's value.
		{app, "owner", plan.Origin{Kind: plan.OriginValues, Source: src("stack.hcl", 16, 43), Via: []plan.Origin{
			{Input: "var.owner", Kind: plan.OriginVariable, Source: src("stack.hcl", 4, 1), Via: []plan.Origin{{Input: "ConfigMap shop/vars", Kind: plan.OriginVarsFrom}}},
		}}},
		// each.value reads what for_each reads; release.app.name is
		// another release's attribute.
		{worker, "region", plan.Origin{Kind: plan.OriginValues, Source: src("stack.hcl", 22, 17), Via: []plan.Origin{
			{Input: "var.regions", Kind: plan.OriginVariable, Source: src("stack.hcl", 7, 1), Via: []plan.Origin{{Input: "var.regions", Kind: plan.OriginVarDefault, Source: src("stack.hcl", 9, 13)}}},
		}}},
		{worker, "upstream", plan.Origin{Kind: plan.OriginValues, Source: src("stack.hcl", 22, 38), Via: []plan.Origin{
			{Input: "release.app.name", Kind: plan.OriginOutput, Source: src("stack.hcl", 14, 1)},
		}}},
		{worker, "stage", plan.Origin{Kind: plan.OriginValues, Source: src("stack.hcl", 22, 67), Via: []plan.Origin{
			{Input: "environment.name", Kind: plan.OriginEnvironment, Source: src("stack.hcl", 11, 1)},
		}}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			want := tc.want
			want.Input = "values " + tc.path
			for i := range want.Overrode {
				want.Overrode[i].Input = want.Input
			}
			got, ok := tc.origins[tc.path]
			if !ok {
				t.Fatalf("no origin for %s in %v", tc.path, keys(tc.origins))
			}
			if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
				t.Errorf("origin of %s:\n got %s\nwant %s", tc.path, g, w)
			}
		})
	}
	// Helm's own empty tables have none.
	if o, ok := app["spare.global"]; ok {
		t.Errorf("spare.global: %+v", o)
	}
}

// The paths are plan.Leaves'.
func TestPathsAreLeavesPaths(t *testing.T) {
	text := "a:\n  b.c: 1\n  \"x y\": [1, {k: v}]\n  e: {}\nl: []\n\"on\": 1\non: 2\n0x1F: 3\n1.50: 4\n"
	got := yamlIndex([]byte(text), inFile("f"), nil)
	m, err := chart.ParseValues([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	leaves := plan.Leaves("", m)
	for _, l := range leaves {
		if _, ok := got[l.Path]; !ok {
			t.Errorf("no %s in %v", l.Path, got)
		}
	}
	if len(got) != len(leaves) {
		t.Errorf("%d leaves indexed, plan.Leaves has %d", len(got), len(leaves))
	}
}

// An environment's var_files and a --var-file inside the stack directory
// are named by their paths from it.
func TestVariablesFromFilesOfTheStack(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"charts/app/Chart.yaml":  appChart,
		"charts/app/values.yaml": "{}\n",
		"env/prod.vars.hcl":      "tier = \"gold\"\n",
		"local.vars.hcl":         "\nsize = \"xl\"\n",
		"stack.hcl": `variable "tier" {
  type = string
}
variable "size" {
  type = string
}
environment "prod" {
  var_files = ["env/prod.vars.hcl"]
}
release "app" {
  chart  = "./charts/app"
  values = [{ tier = var.tier, size = var.size }]
}
`,
	})
	cfg, diags := config.LoadDir(dir)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	varFile, diags := config.ReadVarFile(filepath.Join(dir, "local.vars.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	st, diags := config.Evaluate(t.Context(), cfg, config.EvalOptions{Environment: "prod", Variables: config.RawValues{varFile}})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	ch, err := chart.Load(filepath.Join(dir, "charts/app"))
	if err != nil {
		t.Fatal(err)
	}
	origins, err := Values(st, st.Releases[0], ch)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]plan.Origin{
		"tier": {Input: "var.tier", Kind: plan.OriginEnvironment, Source: src(filepath.Join("env", "prod.vars.hcl"), 1, 8)},
		"size": {Input: "var.size", Kind: plan.OriginVarFile, Source: src("local.vars.hcl", 2, 8)},
	} {
		o := origins[path]
		if len(o.Via) != 1 || len(o.Via[0].Via) != 1 {
			t.Fatalf("%s: %s", path, jsonOf(t, o))
		}
		if g, w := jsonOf(t, o.Via[0].Via[0]), jsonOf(t, want); g != w {
			t.Errorf("%s given:\n got %s\nwant %s", path, g, w)
		}
	}
}

// Values written as a reference to a local that is an object: the leaf is
// where the reference is, the local narrowed to the item that holds it.
func TestValuesFromALocalObject(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"charts/app/Chart.yaml":  appChart,
		"charts/app/values.yaml": "{}\n",
		"stack.hcl": `variable "tag" {
  default = "1.0"
}
locals {
  common = {
    image = { tag = var.tag }
    team  = "core"
  }
}
release "app" {
  chart  = "./charts/app"
  values = [local.common, { img = local.common.image }]
}
`,
	})
	st := evalDir(t, dir)
	ch, err := chart.Load(filepath.Join(dir, "charts/app"))
	if err != nil {
		t.Fatal(err)
	}
	origins, err := Values(st, st.Releases[0], ch)
	if err != nil {
		t.Fatal(err)
	}
	varTag := plan.Origin{Input: "var.tag", Kind: plan.OriginVariable, Source: src("stack.hcl", 1, 1), Via: []plan.Origin{
		{Input: "var.tag", Kind: plan.OriginVarDefault, Source: src("stack.hcl", 2, 13)},
	}}
	for path, want := range map[string]plan.Origin{
		"image.tag": {Kind: plan.OriginValues, Source: src("stack.hcl", 12, 13), Via: []plan.Origin{
			{Input: "local.common", Kind: plan.OriginLocal, Source: src("stack.hcl", 6, 15), Via: []plan.Origin{varTag}},
		}},
		"team": {Kind: plan.OriginValues, Source: src("stack.hcl", 12, 13), Via: []plan.Origin{
			{Input: "local.common", Kind: plan.OriginLocal, Source: src("stack.hcl", 7, 5)},
		}},
		"img.tag": {Kind: plan.OriginValues, Source: src("stack.hcl", 12, 29), Via: []plan.Origin{
			{Input: "local.common", Kind: plan.OriginLocal, Source: src("stack.hcl", 6, 15), Via: []plan.Origin{varTag}},
		}},
	} {
		want.Input = "values " + path
		if g, w := jsonOf(t, origins[path]), jsonOf(t, want); g != w {
			t.Errorf("origin of %s:\n got %s\nwant %s", path, g, w)
		}
	}
}
