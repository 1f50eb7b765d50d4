package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const envStack = `
variable "replicas" {
  type    = number
  default = 1
}
variable "tier" {
  type    = string
  default = "none"
}
environment "staging" {
  vars = { replicas = 2 }
}
environment "prod" {
  var_files = ["envs/${environment.name}.vars.hcl"]
  vars      = { tier = "gold" }
}
release "api" {
  chart       = "./c"
  namespace   = "shop-${environment.name}"
  history_max = var.replicas
  labels      = { tier = var.tier }
}
`

func TestEnvironments(t *testing.T) {
	files := map[string]string{
		"main.hcl":            envStack,
		"envs/prod.vars.hcl":  "replicas = 5\ntier = \"silver\"\n",
		"x.auto.vars.hcl":     "replicas = 9\n",
		"envs/other.vars.hcl": "replicas = 7\n",
	}
	varFile := filepath.Join(t.TempDir(), "cli.vars.hcl")
	if err := os.WriteFile(varFile, []byte("tier = \"cli\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		opts          EvalOptions
		ns, tier, id  string
		replicas      int
		envFiles      string
		wantDiagnosis string
	}{
		// The environment's vars win over *.auto.vars.hcl.
		{name: "staging", opts: EvalOptions{Environment: "staging"}, ns: "shop-staging", tier: "none", replicas: 2, id: "s.staging"},
		// var_files (relative to the stack directory) then vars.
		{name: "prod", opts: EvalOptions{Environment: "prod"}, ns: "shop-prod", tier: "gold", replicas: 5, id: "s.prod", envFiles: "envs/prod.vars.hcl"},
		// --var-file and --var come after the environment.
		{name: "prod with --var-file", opts: EvalOptions{Environment: "prod", Variables: append(varFiles(t, varFile), cliVars(t, "replicas=4")...)}, ns: "shop-prod", tier: "cli", replicas: 4, id: "s.prod", envFiles: "envs/prod.vars.hcl"},
		{name: "none chosen", wantDiagnosis: `main.hcl:14:1: error: No environment chosen: The stack declares the environments "prod", "staging" and none named "default"`},
		{name: "unknown", opts: EvalOptions{Environment: "qa"}, wantDiagnosis: `error: Unknown environment: The stack declares no environment "qa". Declared environments: "prod", "staging".`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := map[string]string{}
			for k, v := range files {
				src[k] = v
			}
			src["main.hcl"] = "stack \"s\" {}\n" + envStack
			st, diags := evaluateSources(t, src, tt.opts)
			if tt.wantDiagnosis != "" {
				if !strings.Contains(diags, tt.wantDiagnosis) {
					t.Fatalf("diagnostics:\n%s\nwant %q", diags, tt.wantDiagnosis)
				}
				return
			}
			if diags != "" {
				t.Fatalf("diagnostics: %s", diags)
			}
			r := st.Releases[0]
			if r.Namespace != tt.ns || r.Labels["tier"] != tt.tier || r.HistoryMax != tt.replicas {
				t.Errorf("namespace %q tier %q replicas %d, want %q %q %d", r.Namespace, r.Labels["tier"], r.HistoryMax, tt.ns, tt.tier, tt.replicas)
			}
			if st.ID() != tt.id || st.Environment != tt.opts.Environment {
				t.Errorf("ID %q environment %q", st.ID(), st.Environment)
			}
			if got := strings.Join(st.EnvironmentFiles, ","); got != tt.envFiles {
				t.Errorf("environment files %q, want %q", got, tt.envFiles)
			}
		})
	}
}

func TestEnvironmentDefault(t *testing.T) {
	st := mustEvaluate(t, map[string]string{"main.hcl": `
stack "s" {}
environment "default" {}
environment "prod" {}
release "api" {
  chart     = "./c"
  namespace = "ns-${environment.name}"
}
`}, EvalOptions{})
	if st.Environment != "default" || st.ID() != "s" || st.Releases[0].Namespace != "ns-default" {
		t.Errorf("environment %q id %q namespace %q", st.Environment, st.ID(), st.Releases[0].Namespace)
	}
}

func TestEnvironmentErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"no environments", `release "a" { chart = "./c" }`, `Unknown environment: The environment "prod" was chosen, but the stack declares no environment blocks.`},
		{"undeclared variable", `
environment "prod" { vars = { nope = 1 } }
release "a" { chart = "./c" }`, `main.hcl:2:38: error: Value for undeclared variable`},
		{"var reference", `
variable "x" { default = 1 }
environment "prod" { vars = { x = var.x } }
release "a" { chart = "./c" }`, `main.hcl:3:35: error: Reference to var not allowed here`},
		{"bad attribute", `
environment "prod" {}
release "a" {
  chart = "./c"
  namespace = environment.label
}`, `main.hcl:5:15: error: Invalid environment attribute`},
		{"file outside", `
environment "prod" { var_files = ["../x.vars.hcl"] }
release "a" { chart = "./c" }`, `Invalid stack file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := evaluateSources(t, map[string]string{"main.hcl": tt.src}, EvalOptions{Environment: "prod"})
			if !strings.Contains(diags, tt.want) {
				t.Fatalf("diagnostics:\n%s\nwant %q", diags, tt.want)
			}
		})
	}
}

// TestNoEnvironmentChosenIsTheOnlyError: when the environment that would
// set a required variable is not chosen, the stack says so once, not also
// that the variable has no value (issue 21).
func TestNoEnvironmentChosenIsTheOnlyError(t *testing.T) {
	_, diags := evaluateSources(t, map[string]string{"main.hcl": `
variable "domain" {
  type = string
}
environment "staging" {
  vars = { domain = "staging.example.com" }
}
environment "prod" {
  vars = { domain = "example.com" }
}
release "api" {
  chart  = "./c"
  values = [{ host = var.domain }]
}
`}, EvalOptions{})
	if !strings.Contains(diags, "No environment chosen") || strings.Count(diags, "error:") != 1 {
		t.Errorf("diagnostics:\n%s\nwant only: No environment chosen", diags)
	}
}
