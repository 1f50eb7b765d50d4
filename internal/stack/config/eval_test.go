package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

func mustEvaluate(t *testing.T, files map[string]string, opts EvalOptions) *Stack {
	t.Helper()
	stack, diags := evaluateSources(t, files, opts)
	if diags != "" {
		t.Fatalf("evaluate: %s", diags)
	}
	return stack
}

// evaluateSources writes files into a fresh stack directory, then loads and
// evaluates it. It returns the diagnostics formatted, "" if none.
func evaluateSources(t *testing.T, files map[string]string, opts EvalOptions) (*Stack, string) {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, diags := LoadDir(dir)
	if diags.HasErrors() {
		return nil, formatDiags(dir, diags)
	}
	stack, diags := evaluateAsRun(cfg, opts)
	return stack, formatDiags(dir, diags)
}

// TestVariablePrecedence checks the documented order: default <
// *.auto.vars.hcl < --var-file < CONVOY_VAR_* < --var.
func TestVariablePrecedence(t *testing.T) {
	const stack = `
variable "v" {
  type    = number
  default = 1
}
release "r" {
  chart       = "./c"
  history_max = var.v
}
`
	varFile := filepath.Join(t.TempDir(), "x.vars.hcl")
	if err := os.WriteFile(varFile, []byte("v = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		auto bool
		opts EvalOptions
		want int
	}{
		{"default", false, EvalOptions{}, 1},
		{"auto vars file", true, EvalOptions{}, 2},
		{"var file over auto", true, EvalOptions{Variables: varFiles(t, varFile)}, 3},
		{"env over var file", true, EvalOptions{Variables: append(varFiles(t, varFile), EnvVarValues([]string{"CONVOY_VAR_v=4"})...)}, 4},
		{"--var over env", true, EvalOptions{Variables: append(append(varFiles(t, varFile), EnvVarValues([]string{"CONVOY_VAR_v=4"})...), cliVars(t, "v=5")...)}, 5},
		{"other env ignored", false, EvalOptions{Variables: EnvVarValues([]string{"CONVOY_VAR_w=9", "V=7"})}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"main.hcl": stack}
			if tt.auto {
				files["a.auto.vars.hcl"] = "v = 2\n"
			}
			s := mustEvaluate(t, files, tt.opts)
			if got := s.Releases[0].HistoryMax; got != tt.want {
				t.Errorf("history_max = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestVariableErrors(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		opts  EvalOptions
		wants []string
	}{
		{
			"--var for undeclared variable",
			`variable "a" { default = 1 }`,
			EvalOptions{Variables: cliVars(t, "b=1")},
			[]string{`-: error: Value for undeclared variable: --var sets "b"`},
		},
		{
			"--var not convertible",
			`variable "a" { type = number }`,
			EvalOptions{Variables: cliVars(t, "a=x")},
			[]string{`main.hcl:1:1: error: Invalid value for variable: The value for var.a from --var is not a number`},
		},
		{
			"complex type parsed as HCL",
			`variable "a" {
  type = list(string)
}
release "r" {
  chart  = "./c"
  labels = { n = join(",", var.a) }
}`,
			EvalOptions{Variables: cliVars(t, `a=["x", "y"]`)},
			nil,
		},
		{
			"default of the wrong type",
			`variable "a" {
  type    = bool
  default = "maybe"
}`,
			EvalOptions{},
			[]string{`main.hcl:3:13: error: Invalid value for variable: The value for var.a from default is not a bool`},
		},
		{
			"validation referring to another variable",
			`variable "a" { default = 1 }
variable "b" {
  default = 1
  validation {
    condition     = var.a > 0
    error_message = "x"
  }
}`,
			EvalOptions{},
			[]string{`main.hcl:5:21: error: Invalid validation condition`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := evaluateSources(t, map[string]string{"main.hcl": tt.src}, tt.opts)
			if len(tt.wants) == 0 && diags != "" {
				t.Fatalf("unexpected diagnostics:\n%s", diags)
			}
			for _, want := range tt.wants {
				if !strings.Contains(diags, want) {
					t.Errorf("diagnostics lack %q:\n%s", want, diags)
				}
			}
		})
	}
}

// TestSensitiveValuesAreMarked checks that sensitive variables and
// set_sensitive carry the Sensitive mark into the model, and that a
// sensitive value cannot leak into plain attributes.
func TestSensitiveValuesAreMarked(t *testing.T) {
	s := mustEvaluate(t, map[string]string{"main.hcl": `
variable "pw" {
  sensitive = true
}
release "r" {
  chart         = "./c"
  values        = [{ auth = { password = var.pw, user = "app" } }, "a: 1"]
  set           = { "x" = "plain" }
  set_sensitive = { "y" = "literal" }
}`}, EvalOptions{Variables: cliVars(t, "pw=hunter2")})
	r := s.Releases[0]
	if !r.SetSensitive["y"].HasMark(Sensitive) {
		t.Error("set_sensitive value is not marked")
	}
	if r.Set["x"].IsMarked() {
		t.Error("plain set value is marked")
	}
	got, sensitive, err := r.Values[0].Go()
	if err != nil || !sensitive {
		t.Fatalf("layer 0: sensitive=%v err=%v", sensitive, err)
	}
	if got["auth"].(map[string]interface{})["password"] != "hunter2" {
		t.Errorf("GoValue must give the real value to the renderer: %v", got)
	}
	if shown := DisplayValue(r.Values[0].Value); strings.Contains(strings.ToLower(stringify(shown)), "hunter2") {
		t.Errorf("DisplayValue leaks the secret: %v", shown)
	}
	if _, sensitive, _ := r.Values[1].Go(); sensitive {
		t.Error("plain YAML layer reported sensitive")
	}

	_, diags := evaluateSources(t, map[string]string{"main.hcl": `
variable "pw" {
  sensitive = true
  default   = "x"
}
release "r" {
  chart = "./c"
  name  = var.pw
}`}, EvalOptions{})
	if !strings.Contains(diags, "main.hcl:8:11: error: Sensitive value not allowed") {
		t.Errorf("sensitive release name accepted:\n%s", diags)
	}
}

func stringify(v interface{}) string {
	switch v := v.(type) {
	case map[string]interface{}:
		var b strings.Builder
		for k, e := range v {
			b.WriteString(k + "=" + stringify(e) + ";")
		}
		return b.String()
	case string:
		return v
	}
	return ""
}

// TestEvaluateReleaseWithAppliedValues is what the apply walker does: once
// release.db is applied, api is re-evaluated with db's real revision.
func TestEvaluateReleaseWithAppliedValues(t *testing.T) {
	s := mustEvaluate(t, map[string]string{"main.hcl": `
release "db" {
  chart = "./c"
}
release "api" {
  chart  = "./c"
  values = [{ dbRevision = release.db.revision, dbStatus = release.db.status, host = release.db.name }]
}`}, EvalOptions{})
	api := s.Release(ReleaseInstanceAddr{Release: ReleaseAddr{Name: "api"}})
	if api == nil || api.Known {
		t.Fatalf("api before apply: %+v", api)
	}
	if _, _, err := api.Values[0].Go(); err == nil {
		t.Error("GoValue of an unknown value must fail")
	}
	if got := DisplayValue(api.Values[0].Value).(map[string]interface{}); got["dbRevision"] != UnknownPlaceholder || got["host"] != "db" {
		t.Errorf("before apply: %v", got)
	}
	db := ReleaseInstanceAddr{Release: ReleaseAddr{Name: "db"}}
	again, diags := s.EvaluateRelease(api.Addr, map[ReleaseInstanceAddr]AppliedRelease{db: {Revision: 3, Status: "deployed"}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if !again.Known {
		t.Error("re-evaluated instance still unknown")
	}
	got, _, err := again.Values[0].Go()
	if err != nil {
		t.Fatal(err)
	}
	if got["dbRevision"] != int64(3) || got["dbStatus"] != "deployed" {
		t.Errorf("after apply: %v", got)
	}
	if len(again.DependsOn) != 1 || again.DependsOn[0].Addr != db {
		t.Errorf("depends_on: %+v", again.DependsOn)
	}
}

func TestReleaseDefaults(t *testing.T) {
	s := mustEvaluate(t, map[string]string{"main.hcl": `
release "r" {
  chart = "oci://registry.example.com/charts/app"
}
release "w" {
  count = 2
  chart = "./charts/w.tgz"
}`}, EvalOptions{})
	r := s.Releases[0]
	if r.Name != "r" || r.Namespace != "default" || !r.Wait || r.Timeout != 0 || r.HistoryMax != 10 ||
		r.ChartSource != ChartOCI || r.Atomic || r.Known != true {
		t.Errorf("defaults: %+v", r)
	}
	if s.Releases[1].Name != "w-0" || s.Releases[2].Name != "w-1" || s.Releases[1].ChartSource != ChartLocal {
		t.Errorf("count instances: %s, %s", s.Releases[1].Name, s.Releases[2].Name)
	}
	if s.Name != filepath.Base(s.Dir) {
		t.Errorf("stack name without a stack block = %q, want the directory name", s.Name)
	}
}

func TestFileFunctions(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.yaml")
	if err := os.WriteFile(outside, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"values/a.yaml": "replicas: 2\n",
		"tpl/v.yaml":    "region: ${region}\nname: ${upper(name)}\n",
	}
	tests := []struct {
		expr string
		want string // the evaluated label, or the diagnostic fragment
	}{
		{`file("values/a.yaml")`, "replicas: 2\n"},
		{`tostring(fileexists("values/a.yaml"))`, "true"},
		{`tostring(fileexists("values/none.yaml"))`, "false"},
		{`templatefile("tpl/v.yaml", { region = "eu", name = "x" })`, "region: eu\nname: X\n"},
		{`file("` + outside + `")`, "a: 1\n"},
		{`file("../outside.yaml")`, "is outside the stack directory"},
		{`file("values/none.yaml")`, "cannot read values/none.yaml"},
		{`templatefile("tpl/v.yaml", { region = "eu" })`, `refers to "name"`},
		{`yamlencode(yamldecode("a: [1, 2]"))`, "\"a\":\n- 1\n- 2\n"},
		{`base64decode(base64encode("hé"))`, "hé"},
		{`sha256("x")`, "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"},
		{`try(jsondecode("{"), "fallback")`, "fallback"},
		{`tostring(length({ a = 1, b = 2 }))`, "2"},
		{`tostring(length("héllo"))`, "5"},
		{`tostring(length(["a"]))`, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			fs := map[string]string{"main.hcl": "release \"r\" {\n  chart = \"./c\"\n  set = { v = " + tt.expr + " }\n}\n"}
			for k, v := range files {
				fs[k] = v
			}
			s, diags := evaluateSources(t, fs, EvalOptions{})
			if s == nil {
				if !strings.Contains(diags, tt.want) {
					t.Fatalf("diagnostics lack %q:\n%s", tt.want, diags)
				}
				return
			}
			got := s.Releases[0].Set["v"]
			if got.Type() != cty.String || got.AsString() != tt.want {
				t.Errorf("got %#v, want %q", got, tt.want)
			}
		})
	}
}

func TestParseReleaseInstanceAddr(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"release.db", "release.db", true},
		{"db", "release.db", true},
		{`release.api["eu"]`, `release.api["eu"]`, true},
		{"release.w[3]", "release.w[3]", true},
		{"release.w[1.5]", "", false},
		{"var.x", "", false},
		{"release.a.b", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		addr, diags := ParseReleaseInstanceAddr(tt.in)
		if tt.ok != !diags.HasErrors() || (tt.ok && addr.String() != tt.want) {
			t.Errorf("ParseReleaseInstanceAddr(%q) = %s, %v", tt.in, addr, diags)
		}
	}
}

func TestGoValueNumbers(t *testing.T) {
	v := cty.ObjectVal(map[string]cty.Value{
		"int":   cty.NumberIntVal(42),
		"float": cty.NumberFloatVal(1.5),
		"big":   cty.MustParseNumberVal("1e30"),
		"list":  cty.TupleVal([]cty.Value{cty.True, cty.NullVal(cty.String), cty.StringVal("s")}),
	})
	got, sensitive, err := GoValue(v)
	if err != nil || sensitive {
		t.Fatal(err, sensitive)
	}
	m := got.(map[string]interface{})
	if m["int"] != int64(42) || m["float"] != 1.5 || m["big"] != 1e30 {
		t.Errorf("numbers: %#v", m)
	}
	l := m["list"].([]interface{})
	if l[0] != true || l[1] != nil || l[2] != "s" {
		t.Errorf("list: %#v", l)
	}
	_, _, err = GoValue(cty.ObjectVal(map[string]cty.Value{"a": cty.ObjectVal(map[string]cty.Value{"b": cty.UnknownVal(cty.String)})}))
	if err == nil || !strings.Contains(err.Error(), "a.b") {
		t.Errorf("unknown value error should name the path: %v", err)
	}
}

func TestResolveTargets(t *testing.T) {
	s := mustEvaluate(t, map[string]string{"main.hcl": `
release "db" {
  chart = "./c"
}
release "api" {
  for_each = toset(["eu", "us"])
  chart    = "./c"
}
release "w" {
  count = 11
  chart = "./c"
}`}, EvalOptions{})
	tests := []struct {
		targets []string
		want    string
		err     string
	}{
		{[]string{"release.api"}, `[release.api["eu"] release.api["us"]]`, ""},
		{[]string{`release.api["us"]`, "db", "release.db"}, `[release.api["us"] release.db]`, ""},
		{[]string{"w[10]", "w[2]"}, `[release.w[2] release.w[10]]`, ""},
		{[]string{`release.api["asia"]`}, `[]`, `The target release.api["asia"] matches no release instance`},
		{[]string{"var.x"}, `[]`, "is not a release address"},
	}
	for _, tt := range tests {
		got, diags := s.ResolveTargets(tt.targets)
		if fmt.Sprint(got) != tt.want {
			t.Errorf("ResolveTargets(%q) = %v, want %s", tt.targets, got, tt.want)
		}
		if (tt.err == "") != !diags.HasErrors() || (tt.err != "" && !strings.Contains(diags.Error(), tt.err)) {
			t.Errorf("ResolveTargets(%q) diagnostics %v, want %q", tt.targets, diags, tt.err)
		}
	}
}

// TestSameKeyDependencies checks that release.x[each.key] and
// release.x[count.index] depend on one instance, not all of them.
func TestSameKeyDependencies(t *testing.T) {
	s := mustEvaluate(t, map[string]string{"main.hcl": `
release "api" {
  for_each = toset(["eu", "us"])
  chart    = "./c"
}
release "web" {
  for_each = toset(["eu", "us"])
  chart    = "./c"
  set      = { api = release.api[each.key].name }
}
release "worker" {
  count = 2
  chart = "./c"
}
release "sidecar" {
  count = 2
  chart = "./c"
  set   = { w = release.worker[count.index].name, all = length(release.api) }
}`}, EvalOptions{})
	deps := func(addr string) string {
		a, _ := ParseReleaseInstanceAddr(addr)
		var out []string
		for _, d := range s.Release(a).DependsOn {
			out = append(out, d.Addr.String())
		}
		return strings.Join(out, " ")
	}
	if got := deps(`release.web["us"]`); got != `release.api["us"]` {
		t.Errorf(`web["us"] depends on %s`, got)
	}
	if got := deps(`release.sidecar[1]`); got != `release.api["eu"] release.api["us"] release.worker[1]` {
		t.Errorf(`sidecar[1] depends on %s`, got)
	}
}

// TestReleaseGraphFromSource checks the release-level graph built without
// evaluation: it needs no variable values, and reports cycles.
func TestReleaseGraphFromSource(t *testing.T) {
	cfg, diags := LoadDir("testdata/valid/shop")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	g, diags := cfg.ReleaseGraph()
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	order, _ := g.TopologicalOrder()
	if fmt.Sprint(order) != "[release.db release.monitor release.api release.worker]" {
		t.Errorf("order %v", order)
	}
	cfg, _ = LoadDir("testdata/invalid/cycle")
	if _, diags := cfg.ReleaseGraph(); !diags.HasErrors() || !strings.Contains(diags[0].Detail, "release.a → release.b → release.c → release.a") {
		t.Errorf("cycle not reported: %v", diags)
	}
}

func TestLocalChartPath(t *testing.T) {
	s := mustEvaluate(t, map[string]string{"main.hcl": `
release "a" {
  chart = "./charts/a"
}
release "b" {
  chart = "../../shared/b-1.0.0.tgz"
}
release "c" {
  chart = "oci://r.example.com/c"
}`}, EvalOptions{})
	for _, tt := range []struct{ rel, want string }{
		{"a", filepath.Join(s.Dir, "charts/a")},
		{"b", filepath.Join(s.Dir, "../../shared/b-1.0.0.tgz")},
		{"c", ""},
	} {
		got, err := s.LocalChartPath(s.Release(ReleaseInstanceAddr{Release: ReleaseAddr{Name: tt.rel}}))
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.rel, got, err, tt.want)
		}
	}
}

func TestIgnoreChanges(t *testing.T) {
	s := mustEvaluate(t, map[string]string{"main.hcl": `
variable "scaled" {
  default = ["api", "web-*"]
}
release "r" {
  chart = "./c"
  ignore_changes = concat(
    [for n in var.scaled : { kind = "Deployment", name = n, paths = ["/spec/replicas"] }],
    [{ kind = "ConfigMap", paths = ["/data/a~1b", "/metadata/annotations/x~0y"] }],
  )
}
`}, EvalOptions{})
	got := fmt.Sprintf("%+v", s.Releases[0].IgnoreChanges)
	want := "[{Kind:Deployment Name:api Paths:[/spec/replicas] PathTokens:[[spec replicas]]} " +
		"{Kind:Deployment Name:web-* Paths:[/spec/replicas] PathTokens:[[spec replicas]]} " +
		"{Kind:ConfigMap Name:* Paths:[/data/a~1b /metadata/annotations/x~0y] PathTokens:[[data a/b] [metadata annotations x~y]]}]"
	if got != want {
		t.Errorf("ignore_changes:\n got %s\nwant %s", got, want)
	}
}

// TestEvaluateReleaseReadsAppliedInstancesOfCountAndForEach: a reader of
// one instance of a count block and one of a for_each block sees those
// instances applied, and their siblings as before apply, however many
// readers re-evaluate (the blocks' values are shared between them).
func TestEvaluateReleaseReadsAppliedInstancesOfCountAndForEach(t *testing.T) {
	s := mustEvaluate(t, map[string]string{"main.hcl": `
release "web" {
  count = 3
  name  = "web-${count.index}"
  chart = "./c"
}
release "db" {
  for_each = toset(["a", "b"])
  name     = "db-${each.key}"
  chart    = "./c"
}
release "reader" {
  count  = 3
  name   = "reader-${count.index}"
  chart  = "./c"
  values = [{
    web     = release.web[count.index].revision
    sibling = release.web[(count.index + 1) % 3].name
    known   = length([for w in release.web : w if w.status == "deployed"])
    db      = release.db["b"].status
    dbName  = release.db["a"].name
  }]
}`}, EvalOptions{})
	web := func(i int) ReleaseInstanceAddr {
		return ReleaseInstanceAddr{Release: ReleaseAddr{Name: "web"}, Key: IntKey(i)}
	}
	dbB := ReleaseInstanceAddr{Release: ReleaseAddr{Name: "db"}, Key: StringKey("b")}
	for round := range 2 {
		for i := range 3 {
			reader := ReleaseInstanceAddr{Release: ReleaseAddr{Name: "reader"}, Key: IntKey(i)}
			got, diags := s.EvaluateRelease(reader, map[ReleaseInstanceAddr]AppliedRelease{
				web(i): {Revision: 10 + i, Status: "deployed"},
				dbB:    {Revision: 1, Status: "failed"},
			})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			// The sibling's status is unknown, so the count of deployed
			// ones is unknown too: the instance is not known.
			if got.Known {
				t.Fatalf("round %d reader %d: known, though it counts unapplied siblings", round, i)
			}
			v := DisplayValue(got.Values[0].Value).(map[string]interface{})
			if v["web"] != int64(10+i) || v["sibling"] != fmt.Sprintf("web-%d", (i+1)%3) || v["db"] != "failed" || v["dbName"] != "db-a" || v["known"] != UnknownPlaceholder {
				t.Fatalf("round %d reader %d: %v", round, i, v)
			}
		}
	}
	// Without the applied map, the same reader sees nothing applied.
	before := s.Release(ReleaseInstanceAddr{Release: ReleaseAddr{Name: "reader"}, Key: IntKey(0)})
	if v := DisplayValue(before.Values[0].Value).(map[string]interface{}); v["web"] != UnknownPlaceholder || v["db"] != UnknownPlaceholder {
		t.Fatalf("before apply: %v", v)
	}
}

func TestStackReleaseFindsEveryInstance(t *testing.T) {
	s := mustEvaluate(t, map[string]string{"main.hcl": `
release "b" {
  count = 12
  name  = "b-${count.index}"
  chart = "./c"
}
release "a" {
  for_each = toset(["x", "y", "z"])
  name     = "a-${each.key}"
  chart    = "./c"
}
release "c" {
  chart = "./c"
}`}, EvalOptions{})
	if len(s.Releases) != 16 {
		t.Fatalf("%d instances", len(s.Releases))
	}
	check := func(s *Stack) {
		t.Helper()
		for _, r := range s.Releases {
			if got := s.Release(r.Addr); got != r {
				t.Fatalf("Release(%s) = %v", r.Addr, got)
			}
		}
		for _, missing := range []ReleaseInstanceAddr{
			{Release: ReleaseAddr{Name: "b"}, Key: IntKey(12)},
			{Release: ReleaseAddr{Name: "a"}, Key: StringKey("w")},
			{Release: ReleaseAddr{Name: "d"}},
		} {
			if got := s.Release(missing); got != nil {
				t.Fatalf("Release(%s) = %s", missing, got.Addr)
			}
		}
	}
	check(s)
	// A stack whose instances are not in address order is searched too.
	shuffled := *s
	shuffled.Releases = slices.Clone(s.Releases)
	slices.Reverse(shuffled.Releases)
	check(&shuffled)
}

// A large block's instances are evaluated on every core: each still gets
// its own values, in order, and dependents read each one's attributes.
func TestEvaluateLargeBlocks(t *testing.T) {
	s := mustEvaluate(t, map[string]string{"main.hcl": `
release "a" {
  count     = 300
  name      = format("a-%03d", count.index)
  namespace = "ns-${count.index % 7}"
  chart     = "./c"
}
release "b" {
  count  = 300
  name   = "b-${count.index}"
  chart  = "./c"
  values = [{ up = "${release.a[count.index].namespace}/${release.a[count.index].name}" }]
}`}, EvalOptions{})
	if len(s.Releases) != 600 {
		t.Fatalf("%d instances", len(s.Releases))
	}
	for i := range 300 {
		a := s.Release(ReleaseInstanceAddr{Release: ReleaseAddr{Name: "a"}, Key: IntKey(i)})
		b := s.Release(ReleaseInstanceAddr{Release: ReleaseAddr{Name: "b"}, Key: IntKey(i)})
		if a == nil || b == nil || a.Name != fmt.Sprintf("a-%03d", i) || a.Namespace != fmt.Sprintf("ns-%d", i%7) {
			t.Fatalf("instance %d: %+v %+v", i, a, b)
		}
		got, _, err := b.Values[0].Go()
		if want := fmt.Sprintf("ns-%d/a-%03d", i%7, i); err != nil || got["up"] != want {
			t.Fatalf("b[%d] reads %v (%v), want %s", i, got["up"], err, want)
		}
	}
}
