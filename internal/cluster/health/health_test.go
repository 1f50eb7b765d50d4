package health_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/health"
	"github.com/convoy-sh/convoy/internal/cluster/kube"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/hashicorp/hcl/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checksOf loads a stack with one release "app" whose body is body and
// returns its health checks.
func checksOf(t *testing.T, body string) ([]*config.HealthCheck, hcl.Diagnostics) {
	t.Helper()
	src := "release \"app\" {\n  chart = \"./app\"\n" + body + "}\n"
	cfg, diags := config.LoadSources(t.TempDir(), map[string][]byte{"stack.hcl": []byte(src)})
	if cfg == nil || diags.HasErrors() {
		return nil, diags
	}
	return cfg.Releases["app"].HealthChecks, nil
}

const certificate = `
  health_check {
    api_version = "cert-manager.io/v1"
    kind        = "Certificate"
    current     = "self.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"
    failed      = "self.status.conditions.exists(c, c.type == 'Issuing' && c.status == 'False' && c.reason == 'Failed')"
  }
`

func cert(conds string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
		"metadata": map[string]any{"name": "web", "namespace": "shop"}}}
	if conds != "" {
		var list []any
		for _, c := range strings.Split(conds, ",") {
			p := strings.Split(c, "=")
			cond := map[string]any{"type": p[0], "status": p[1]}
			if len(p) > 2 {
				cond["reason"] = p[2]
			}
			list = append(list, cond)
		}
		u.Object["status"] = map[string]any{"conditions": list}
	}
	return u
}

func TestCheck(t *testing.T) {
	checks, diags := checksOf(t, certificate)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	set, diags := health.Compile(checks)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want kube.HealthResult
		msg  string
	}{
		{"no status yet: in progress, not an error", cert(""), kube.HealthResult{}, "health_check current cannot be evaluated yet"},
		{"issuing", cert("Ready=False,Issuing=True"), kube.HealthResult{}, "health_check current does not hold yet: self.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True') (stack.hcl:7:19)"},
		{"ready", cert("Ready=True"), kube.HealthResult{Current: true}, "health_check current holds"},
		{"failed wins over ready", cert("Ready=True,Issuing=False=Failed"), kube.HealthResult{Failed: true}, "health_check failed holds: self.status.conditions.exists(c, c.type == 'Issuing'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := set.Check(tt.obj)
			if !ok || got.Current != tt.want.Current || got.Failed != tt.want.Failed || !strings.Contains(got.Message, tt.msg) {
				t.Fatalf("Check = %+v, %v; want %+v with %q", got, ok, tt.want, tt.msg)
			}
		})
	}
	other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	if _, ok := set.Check(other); ok {
		t.Fatal("a ConfigMap has no check: kstatus's rules apply")
	}
	// Another version of the kind (as a watch may read it) is judged by
	// the kind's check.
	if got, ok := set.Check(func() *unstructured.Unstructured {
		u := cert("Ready=True")
		u.SetAPIVersion("cert-manager.io/v1beta1")
		return u
	}()); !ok || !got.Current {
		t.Fatalf("another version: %+v %v", got, ok)
	}
}

// Errors name the place of the expression's error in the file.
func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, body, summary, where string
	}{
		{
			name:    "syntax",
			body:    "  health_check {\n    api_version = \"example.com/v1\"\n    kind = \"Widget\"\n    current = \"self.status.ready ==\"\n  }\n",
			summary: "Invalid CEL in health_check current",
			where:   "stack.hcl:6:36",
		},
		{
			name:    "not a bool",
			body:    "  health_check {\n    api_version = \"example.com/v1\"\n    kind = \"Widget\"\n    current = \"1 + 1\"\n    failed = \"'x'\"\n  }\n",
			summary: "Invalid health_check current",
			where:   "stack.hcl:6:15",
		},
		{
			name:    "an unknown variable",
			body:    "  health_check {\n    api_version = \"example.com/v1\"\n    kind = \"Widget\"\n    current = \"object.status.ready\"\n  }\n",
			summary: "Invalid CEL in health_check current",
			where:   "stack.hcl:6:16",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checks, diags := checksOf(t, tt.body)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			_, diags = health.Compile(checks)
			if !diags.HasErrors() {
				t.Fatal("compiled")
			}
			d := diags[0]
			where := filepath.Base(d.Subject.Filename) + ":" + strconv.Itoa(d.Subject.Start.Line) + ":" + strconv.Itoa(d.Subject.Start.Column)
			if d.Summary != tt.summary || !strings.HasPrefix(where, tt.where) {
				t.Fatalf("got %q at %s (%s); want %q at %s", d.Summary, where, d.Detail, tt.summary, tt.where)
			}
		})
	}
}
