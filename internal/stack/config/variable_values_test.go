package config

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// evaluateAsRun evaluates cfg as run.Load does: with the stack directory's
// *.auto.vars.hcl files before the values given.
func evaluateAsRun(cfg *Config, opts EvalOptions) (*Stack, hcl.Diagnostics) {
	auto, diags := ReadAutoVarFiles(cfg.Dir)
	opts.Variables = append(auto, opts.Variables...)
	st, d := Evaluate(context.Background(), cfg, opts)
	return st, append(diags, d...)
}

// cliVars are --var arguments.
func cliVars(t *testing.T, args ...string) RawValues {
	t.Helper()
	var out RawValues
	for _, a := range args {
		v, diags := ParseVarArg(a)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		out = append(out, v)
	}
	return out
}

// varFiles are --var-file arguments, read.
func varFiles(t *testing.T, paths ...string) RawValues {
	t.Helper()
	var out RawValues
	for _, p := range paths {
		v, diags := ReadVarFile(p)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		out = append(out, v)
	}
	return out
}

func TestCollectVariableValues(t *testing.T) {
	t.Run("environment", func(t *testing.T) {
		got := EnvVarValues([]string{"HOME=/root", "CONVOY_VAR_b=2", "CONVOY_VAR_a=x=y", "CONVOY_VAR_=skip", "CONVOY_VARx=no", "CONVOY_VAR_c"})
		want := RawValues{
			{Source: ValueFromEnvVar, Where: "CONVOY_VAR_b", Name: "b", Text: "2"},
			{Source: ValueFromEnvVar, Where: "CONVOY_VAR_a", Name: "a", Text: "x=y"},
		}
		if !slices.EqualFunc(got, want, rawEqual) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})
	t.Run("--var", func(t *testing.T) {
		v, diags := ParseVarArg("tags=[\"a=b\"]")
		if diags.HasErrors() || !rawEqual(v, RawValue{Source: ValueFromCLIArg, Where: "--var", Name: "tags", Text: `["a=b"]`}) {
			t.Errorf("got %+v %v", v, diags)
		}
		for _, bad := range []string{"nope", "=1"} {
			if _, diags := ParseVarArg(bad); !strings.Contains(diags.Error(), "Invalid --var") {
				t.Errorf("%q: %v", bad, diags)
			}
		}
	})
	t.Run("files", func(t *testing.T) {
		dir := t.TempDir()
		for name, src := range map[string]string{"b.auto.vars.hcl": "v = 2\n", "a.auto.vars.hcl": "v = 1\n", "c.vars.hcl": "v = 3\n", "main.hcl": ""} {
			writeFile(t, filepath.Join(dir, name), src)
		}
		auto, diags := ReadAutoVarFiles(dir)
		if diags.HasErrors() || len(auto) != 2 || auto[0].Where != filepath.Join(dir, "a.auto.vars.hcl") || auto[1].Where != filepath.Join(dir, "b.auto.vars.hcl") ||
			!auto[0].IsFile() || auto[0].Source != ValueFromAutoFile || string(auto[1].File) != "v = 2\n" {
			t.Errorf("auto files %+v %v", auto, diags)
		}
		named, diags := ReadVarFile(filepath.Join(dir, "c.vars.hcl"))
		if diags.HasErrors() || !named.IsFile() || named.Source != ValueFromNamedFile || string(named.File) != "v = 3\n" {
			t.Errorf("--var-file %+v %v", named, diags)
		}
		_, diags = ReadVarFile(filepath.Join(dir, "missing.vars.hcl"))
		if !strings.Contains(diags.Error(), "Cannot read variables file") || !strings.Contains(diags.Error(), "missing.vars.hcl") {
			t.Errorf("missing --var-file: %v", diags)
		}
	})
}

func rawEqual(a, b RawValue) bool {
	return a.Source == b.Source && a.Where == b.Where && a.Name == b.Name && a.Text == b.Text && string(a.File) == string(b.File) && a.Sensitive == b.Sensitive
}

// TestValueSourcePrecedence: default < *.auto.vars.hcl < the environment's
// var_files < its vars < --var-file < CONVOY_VAR_* < --var < the caller's,
// whatever the order of the list; within a source the last value wins.
func TestValueSourcePrecedence(t *testing.T) {
	const stack = `
variable "v" {
  type    = number
  default = 1
}
environment "plain" {}
environment "files" {
  var_files = ["env.vars.hcl"]
}
environment "vars" {
  var_files = ["env.vars.hcl"]
  vars      = { v = 4 }
}
release "r" {
  chart       = "./c"
  history_max = var.v
}
`
	named := func(name, src string) RawValue { return VariablesFile(ValueFromNamedFile, name, []byte(src)) }
	env := func(v string) RawValue { return EnvVarValues([]string{"CONVOY_VAR_v=" + v})[0] }
	cli := func(v string) RawValue { return VariableValue(ValueFromCLIArg, "--var", "v", v) }
	caller := func(v string) RawValue { return VariableValue(ValueFromCaller, "spec.vars", "v", v) }
	tests := []struct {
		name        string
		auto        bool
		environment string
		values      RawValues
		want        int
	}{
		{"default", false, "plain", nil, 1},
		{"auto file", true, "plain", nil, 2},
		{"environment var_files over auto", true, "files", nil, 3},
		{"environment vars over its var_files", true, "vars", nil, 4},
		{"--var-file over environment", true, "vars", RawValues{named("a.vars.hcl", "v = 5")}, 5},
		{"--var-files in order", true, "vars", RawValues{named("a.vars.hcl", "v = 5"), named("b.vars.hcl", "v = 6")}, 6},
		{"CONVOY_VAR over --var-file", true, "vars", RawValues{env("7"), named("a.vars.hcl", "v = 5")}, 7},
		{"--var over CONVOY_VAR", true, "vars", RawValues{cli("8"), env("7"), named("a.vars.hcl", "v = 5")}, 8},
		{"last --var wins", false, "plain", RawValues{cli("8"), cli("9")}, 9},
		{"caller over --var", true, "vars", RawValues{caller("10"), cli("8"), env("7")}, 10},
		{"last caller value wins", false, "plain", RawValues{caller("10"), caller("11")}, 11},
		{"auto file given out of order", true, "plain", RawValues{cli("8")}, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"main.hcl": stack, "env.vars.hcl": "v = 3\n"}
			if tt.auto {
				files["a.auto.vars.hcl"] = "v = 2\n"
			}
			s := mustEvaluate(t, files, EvalOptions{Environment: tt.environment, Variables: tt.values})
			if got := s.Releases[0].HistoryMax; got != tt.want {
				t.Errorf("history_max = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestBadValueNamesItsSource: a value that is not of the variable's type,
// or sets an undeclared variable, is reported with where it came from: the
// file and line, or the flag, environment variable or object.
func TestBadValueNamesItsSource(t *testing.T) {
	const stack = `variable "n" {
  type = number
}
`
	tests := []struct {
		name   string
		auto   string // *.auto.vars.hcl content, "" for none
		values RawValues
		want   string
	}{
		{"auto file", "\nn = \"x\"\n", nil, `x.auto.vars.hcl:2:5: error: Invalid value for variable: The value for var.n from `},
		{"--var-file", "", RawValues{VariablesFile(ValueFromNamedFile, "prod.vars.hcl", []byte("n = \"x\"\n"))},
			`prod.vars.hcl:1:5: error: Invalid value for variable: The value for var.n from prod.vars.hcl is not a number`},
		{"--var-file syntax", "", RawValues{VariablesFile(ValueFromNamedFile, "prod.vars.hcl", []byte("n = = 1\n"))},
			`prod.vars.hcl:1:5: error: Invalid expression`},
		{"--var-file undeclared", "", RawValues{VariablesFile(ValueFromNamedFile, "prod.vars.hcl", []byte("n = 1\nz = 2\n"))},
			`prod.vars.hcl:2:5: warning: Value for undeclared variable: prod.vars.hcl sets "z", but the stack declares no such variable; the value is ignored.`},
		{"CONVOY_VAR", "", EnvVarValues([]string{"CONVOY_VAR_n=x"}),
			`main.hcl:1:1: error: Invalid value for variable: The value for var.n from CONVOY_VAR_n is not a number`},
		{"--var", "", RawValues{VariableValue(ValueFromCLIArg, "--var", "n", "x")},
			`main.hcl:1:1: error: Invalid value for variable: The value for var.n from --var is not a number`},
		{"--var undeclared", "", RawValues{VariableValue(ValueFromCLIArg, "--var", "n", "1"), VariableValue(ValueFromCLIArg, "--var", "z", "1")},
			`-: error: Value for undeclared variable: --var sets "z", but the stack declares no variable of that name.`},
		{"caller", "", RawValues{VariableValue(ValueFromCaller, "ConfigMap shop/vars", "n", "x")},
			`main.hcl:1:1: error: Invalid value for variable: The value for var.n from ConfigMap shop/vars is not a number`},
		{"caller undeclared", "", RawValues{VariableValue(ValueFromCaller, "spec.vars", "n", "1"), VariableValue(ValueFromCaller, "spec.vars", "z", "1")},
			`-: error: Value for undeclared variable: spec.vars sets "z", but the stack declares no variable of that name.`},
		{"no source", "", RawValues{{Where: "somewhere", Name: "n", Text: "1"}},
			`-: error: Invalid variable value: The value from somewhere has no valid source (ValueSource(0)).`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"main.hcl": stack}
			if tt.auto != "" {
				files["x.auto.vars.hcl"] = tt.auto
			}
			_, diags := evaluateSources(t, files, EvalOptions{Variables: tt.values})
			if !strings.Contains(diags, tt.want) {
				t.Errorf("diagnostics:\n%s\nwant %q", diags, tt.want)
			}
		})
	}

	// Values for other stacks in the environment are no error.
	if _, diags := evaluateSources(t, map[string]string{"main.hcl": stack}, EvalOptions{Variables: EnvVarValues([]string{"CONVOY_VAR_n=1", "CONVOY_VAR_z=1"})}); diags != "" {
		t.Errorf("undeclared CONVOY_VAR_z: %s", diags)
	}
}

// TestSensitiveValues: a value the caller marks sensitive (from a Secret)
// makes the variable sensitive; a later value that is not replaces it.
func TestSensitiveValues(t *testing.T) {
	const stack = `variable "token" {
  type = string
}
locals {
  t = var.token
}
`
	secret := VariableValue(ValueFromCaller, "Secret shop/creds", "token", "s3cr3t")
	secret.Sensitive = true
	plain := VariableValue(ValueFromCaller, "spec.vars", "token", "plain")
	sensitiveFile := VariablesFile(ValueFromNamedFile, "secret.vars.hcl", []byte(`token = "f1le"`))
	sensitiveFile.Sensitive = true
	tests := []struct {
		name      string
		values    RawValues
		want      string
		sensitive bool
	}{
		{"from a Secret", RawValues{secret}, "s3cr3t", true},
		{"replaced by spec.vars", RawValues{secret, plain}, "plain", false},
		{"replacing spec.vars", RawValues{plain, secret}, "s3cr3t", true},
		{"sensitive file", RawValues{sensitiveFile}, "f1le", true},
		{"--var", cliVars(t, "token=x"), "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustEvaluate(t, map[string]string{"main.hcl": stack}, EvalOptions{Variables: tt.values})
			got := s.ev.locals["t"]
			if got.HasMark(Sensitive) != tt.sensitive {
				t.Errorf("sensitive %v, want %v", got.HasMark(Sensitive), tt.sensitive)
			}
			if v, _ := got.Unmark(); !v.RawEquals(cty.StringVal(tt.want)) {
				t.Errorf("value %#v, want %q", v, tt.want)
			}
		})
	}
}

// TestRawValuesJSON: saved plans record raw values with their source by
// name.
func TestRawValuesJSON(t *testing.T) {
	in := RawValues{
		VariablesFile(ValueFromNamedFile, "a.vars.hcl", []byte("v = 1\n")),
		VariablesFile(ValueFromNamedFile, "empty.vars.hcl", []byte{}),
		VariableValue(ValueFromEnvVar, "CONVOY_VAR_v", "v", "2"),
		VariableValue(ValueFromCLIArg, "--var", "v", ""),
		{Source: ValueFromCaller, Where: "Secret a/b", Name: "v", Text: "s", Sensitive: true},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"Source":"env"`) {
		t.Errorf("source not named: %s", b)
	}
	var out RawValues
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(in, out, rawEqual) || !out[1].IsFile() || out[3].IsFile() {
		t.Errorf("round trip:\n%+v\n%+v", in, out)
	}
	if _, err := json.Marshal(RawValues{{Name: "v"}}); err == nil {
		t.Error("a value without source was encoded")
	}
	if err := json.Unmarshal([]byte(`[{"Source":"nope"}]`), &out); err == nil {
		t.Error("an unknown source was decoded")
	}
}

// A variable declared without a type takes a value given as text (--var,
// CONVOY_VAR_*, the controller's spec.vars) as a number or a bool when its
// default is one: `--var count=6` with `default = 4` is 6, where it was
// "6", which a chart's values then held as a string (issue 54, item 6).
// Without a default, or with a default of another type, it stays a string,
// as Terraform takes it; text that is not of the default's type too, with
// a warning at the declaration.
func TestUntypedVariableGivenAsTextTakesItsDefaultsType(t *testing.T) {
	const stack = `variable "count" {
  default = 4
}
variable "debug" {
  default = false
}
variable "name" {
  default = "x"
}
variable "free" {
  default = null
}
`
	tests := []struct {
		values RawValues
		name   string
		want   cty.Value
		warn   string
	}{
		{cliVars(t, "count=6"), "count", cty.NumberIntVal(6), ""},
		{cliVars(t, "count=2.5"), "count", cty.NumberFloatVal(2.5), ""},
		{EnvVarValues([]string{"CONVOY_VAR_debug=true"}), "debug", cty.True, ""},
		{RawValues{VariableValue(ValueFromCaller, "spec.vars", "count", "6")}, "count", cty.NumberIntVal(6), ""},
		{cliVars(t, "name=7"), "name", cty.StringVal("7"), ""},
		{cliVars(t, "free=7"), "free", cty.StringVal("7"), ""},
		{cliVars(t, "count=many"), "count", cty.StringVal("many"),
			`main.hcl:1:1: warning: Value taken as a string: var.count has no type and its default is a number, but the value from --var is not a number: it is taken as the string "many". Declare the variable's type (type = string, or type = number) to say which it is.`},
		{cliVars(t, "debug=yes"), "debug", cty.StringVal("yes"), `the value from --var is not a bool: it is taken as the string "yes"`},
	}
	for _, tt := range tests {
		t.Run(tt.values[0].Where+" "+tt.name+"="+tt.values[0].Text, func(t *testing.T) {
			s, diags := evaluateSources(t, map[string]string{"main.hcl": stack}, EvalOptions{Variables: tt.values})
			if (tt.warn == "" && diags != "") || !strings.Contains(diags, tt.warn) {
				t.Fatalf("diagnostics:\n%s\nwant %q", diags, tt.warn)
			}
			if got := s.ev.vars[tt.name]; !got.RawEquals(tt.want) {
				t.Errorf("var.%s = %#v, want %#v", tt.name, got, tt.want)
			}
		})
	}
}
