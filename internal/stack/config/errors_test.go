package config

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiagnosticLocations pins the exact location and summary of the errors
// users hit most. The fixtures are in testdata/invalid/<name>/main.hcl.
func TestDiagnosticLocations(t *testing.T) {
	tests := []struct {
		stack   string
		at      string // file:line:column of the diagnostic's subject
		summary string
		detail  string // a fragment of the detail
	}{
		{"unknown_block", "main.hcl:3:1", "Unsupported block type", `"resource"`},
		{"unknown_attribute", "main.hcl:3:3", "Unsupported argument", `"replicas"`},
		{"wrong_type", "main.hcl:3:17", "Incorrect attribute value type", `"wait": bool required`},
		{"wrong_type", "main.hcl:4:17", "Incorrect attribute value type", `"history_max": number required`},
		{"duplicate_release", "main.hcl:5:1", `Duplicate release "web"`, "main.hcl:1,1-14"},
		{"undeclared_release", "main.hcl:3:20", "Reference to undeclared release", `"postgres". Declare it with a release "postgres" block.`},
		{"misspelt_release", "main.hcl:3:20", "Reference to undeclared release", `There is no release named "postgress". Did you mean release.postgres?`},
		{"misspelt_release", "main.hcl:8:17", "Reference to undeclared release", `There is no release named "cahce". Did you mean release.cache?`},
		{"undeclared_variable", "main.hcl:3:15", "Reference to undeclared input variable", `"namespace"`},
		{"missing_variable", "main.hcl:1:1", "No value for required variable", `"token"`},
		{"cycle", "main.hcl:13:19", "Dependency cycle", "release.a → release.b → release.c → release.a"},
		{"self_reference", "main.hcl:3:14", "Self-referential release", "release.a"},
		{"local_cycle", "main.hcl:3:10", "Cycle in local values", "local.a → local.b → local.a"},
		{"validation", "main.hcl:3:13", "Invalid value for variable", "replicas must be positive"},
		{"invalid_utf8", "main.hcl:2:21", "Invalid character encoding", "UTF-8"},
		{"deep_nesting", "main.hcl:2:262", "Nesting too deep", "256"},
		{"crds_policy", "main.hcl:3:11", "Invalid crds", `"replace"`},
		{"health_check", "main.hcl:11:22", "Invalid health_check attribute", "HCL interpolation, which health checks do not have"},
		{"health_check", "main.hcl:13:16", "Missing required argument", `"current"`},
		{"health_check_duplicate", "main.hcl:8:3", "Duplicate health_check", "main.hcl line 3"},
		{"storage", "main.hcl:3:18", "Invalid storage driver", `"etcd" is not a storage driver: want "secret"`},
		{"storage_connection", "main.hcl:4:18", "Connection without the sql driver", `driver is "configmap"`},
	}
	for _, tt := range tests {
		t.Run(tt.stack+"@"+tt.at, func(t *testing.T) {
			dir := filepath.Join("testdata/invalid", tt.stack)
			diags := loadAndEvaluate(dir, EvalOptions{Variables: EnvVarValues(testEnv)})
			var found []string
			for _, d := range diags {
				if d.Subject == nil {
					continue
				}
				at := fmt.Sprintf("%s:%d:%d", filepath.Base(d.Subject.Filename), d.Subject.Start.Line, d.Subject.Start.Column)
				found = append(found, at+" "+d.Summary)
				if at == tt.at && d.Summary == tt.summary && strings.Contains(d.Detail, tt.detail) {
					return
				}
			}
			t.Errorf("no diagnostic %q at %s with detail containing %q; got:\n%s", tt.summary, tt.at, tt.detail, strings.Join(found, "\n"))
		})
	}
}
