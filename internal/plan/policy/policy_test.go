package policy_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/chart"
	"github.com/convoy-sh/convoy/internal/plan"
	"github.com/convoy-sh/convoy/internal/plan/policy"
	"github.com/convoy-sh/convoy/internal/stack/addrs"
	"github.com/convoy-sh/convoy/internal/stack/config"
	"github.com/hashicorp/hcl/v2"
)

// compile decodes src as a stack file and compiles its policies.
func compile(t *testing.T, src string, o policy.Options) (*policy.Set, hcl.Diagnostics) {
	t.Helper()
	cfg, diags := config.LoadSources(t.TempDir(), map[string][]byte{"policies.hcl": []byte(src)})
	if diags.HasErrors() {
		return nil, diags
	}
	return policy.Compile(cfg.SortedPolicies(), o)
}

func mustCompile(t *testing.T, src string) *policy.Set {
	t.Helper()
	set, diags := compile(t, src, policy.Options{})
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	return set
}

// testPlan is an upgrade of release.a that deletes a ConfigMap, updates a
// Deployment to one replica and keeps a Secret, with a sensitive value,
// and a no-op release.b.
func testPlan() *plan.Plan {
	a, _ := addrs.ParseReleaseInstance("release.a")
	b, _ := addrs.ParseReleaseInstance("release.b")
	return &plan.Plan{
		Stack: "shop", Environment: "prod",
		Releases: []*plan.ReleaseChange{
			{
				Addr: plan.InstanceAddr(a), Name: "a", Namespace: "apps", Cluster: "eu", Action: plan.ActionUpgrade, Labels: map[string]string{"team": "shop"},
				Reasons:   []plan.Reason{{Kind: plan.ReasonValues, Detail: "1 value changed"}},
				Chart:     plan.ChartChange{Before: &plan.ChartRef{Name: "app", Version: "1.2.0"}, After: &plan.ChartRef{Name: "app", Version: "1.1.0"}},
				Sensitive: []string{"hunter2-secret"},
				Saved: &plan.SavedRelease{Rendered: &chart.Rendered{Values: map[string]any{
					"image": map[string]any{"tag": "latest"},
					"db":    map[string]any{"host": "db", "pass": "hunter2-secret"},
				}}},
				ValuesBefore: map[string]any{"image": map[string]any{"tag": "1.0"}},
				KubeTarget:   "1.37",
				Deprecations: []plan.Deprecation{{Ref: plan.ObjectRef{Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget", Namespace: "apps", Name: "web"}, DeprecatedIn: "1.21", RemovedIn: "1.25", Removed: true, Replacement: "policy/v1"}},
				Impact:       &plan.Impact{DataLoss: []plan.DataLoss{{Ref: plan.ObjectRef{Version: "v1", Kind: "PersistentVolumeClaim", Namespace: "apps", Name: "data"}, Action: plan.ObjectDelete, Reason: "deleted"}}},
				Objects: []*plan.ObjectChange{
					{
						Ref: plan.ObjectRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "apps", Name: "web"}, Action: plan.ObjectUpdate,
						Before: map[string]any{"spec": map[string]any{"replicas": int64(3)}},
						After:  map[string]any{"spec": map[string]any{"replicas": int64(1)}},
						Diff:   &plan.Diff{Changes: []*plan.Change{{Path: "spec.replicas", Op: plan.FieldChange, Before: int64(3), After: int64(1), Manager: "kubectl-scale"}}},
					},
					{
						Ref: plan.ObjectRef{Version: "v1", Kind: "ConfigMap", Namespace: "apps", Name: "web-config"}, Action: plan.ObjectDelete,
						Before: map[string]any{"data": map[string]any{"k": "v"}},
					},
					{
						Ref: plan.ObjectRef{Version: "v1", Kind: "Secret", Namespace: "apps", Name: "web-secret"}, Action: plan.ObjectNoOp,
						Before: map[string]any{"data": map[string]any{"pass": plan.SensitivePlaceholder}},
						After:  map[string]any{"data": map[string]any{"pass": plan.SensitivePlaceholder}},
					},
				},
			},
			{Addr: plan.InstanceAddr(b), Name: "b", Namespace: "apps", Action: plan.ActionNoOp},
		},
	}
}

func evaluate(t *testing.T, src string) []plan.PolicyResult {
	t.Helper()
	res, err := mustCompile(t, src).Evaluate(context.Background(), testPlan())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestVariables checks every variable a policy sees: each condition is
// written to fail, so that a result proves what the variable holds.
func TestVariables(t *testing.T) {
	for name, tc := range map[string]struct {
		cond string
		want []string // "release object" of each violation
	}{
		"object.kind and action": {`!(object.kind == 'ConfigMap' && object.action == 'delete')`, []string{"release.a v1 ConfigMap apps/web-config"}},
		"object.ref":             {`object.ref != 'apps/v1 Deployment apps/web'`, []string{"release.a apps/v1 Deployment apps/web"}},
		"object.apiVersion":      {`object.apiVersion != 'apps/v1'`, []string{"release.a apps/v1 Deployment apps/web"}},
		"object.namespace/name":  {`!(object.namespace == 'apps' && object.name == 'web-secret')`, []string{"release.a v1 Secret apps/web-secret"}},
		"object.before/after":    {`object.kind != 'Deployment' || object.after.spec.replicas > object.before.spec.replicas / 2`, []string{"release.a apps/v1 Deployment apps/web"}},
		"object.after null":      {`object.after != null`, []string{"release.a v1 ConfigMap apps/web-config"}},
		"object.changes":         {`!object.changes.exists(c, c.path == 'spec.replicas' && c.op == 'change' && c.before == 3 && c.after == 1 && c.manager == 'kubectl-scale')`, []string{"release.a apps/v1 Deployment apps/web"}},
		"object no-op included":  {`object.action != 'no-op'`, []string{"release.a v1 Secret apps/web-secret"}},
		"release basics":         {`!(release.address == 'release.a' && release.name == 'a' && release.namespace == 'apps' && release.cluster == 'eu' && release.action == 'upgrade')`, []string{"release.a"}},
		"release.reasons":        {`!('values' in release.reasons)`, []string{"release.a"}},
		"release.chart":          {`release.chart.before == null || release.chart.after == null || release.chart.after.version >= release.chart.before.version`, []string{"release.a"}},
		"release.values":         {`release.values == null || release.values.image.tag != 'latest'`, []string{"release.a"}},
		"release.values_before":  {`release.values_before == null || release.values_before.image.tag != '1.0'`, []string{"release.a"}},
		"release for no-ops too": {`release.name != 'b'`, []string{"release.b"}},
		"release.impact":         {`release.impact == null || !release.impact.data_loss.exists(d, d.ref == 'v1 PersistentVolumeClaim apps/data')`, []string{"release.a"}},
		"release.deprecations":   {`!release.deprecations.exists(d, d.removed && d.ref == 'policy/v1beta1 PodDisruptionBudget apps/web' && d.api_version == 'policy/v1beta1' && d.kind == 'PodDisruptionBudget' && d.deprecated_in == '1.21' && d.removed_in == '1.25' && d.replacement == 'policy/v1' && release.kube_target == '1.37')`, []string{"release.a"}},
		"plan":                   {`!(plan.stack == 'shop' && plan.environment == 'prod' && plan.summary.upgrade == 1 && plan.summary.unchanged == 1 && !plan.destroy)`, []string{""}},
	} {
		t.Run(name, func(t *testing.T) {
			res := evaluate(t, `policy "p" {
  condition = <<-EOT
    `+tc.cond+`
  EOT
  message = "m"
}`)
			var got []string
			for _, r := range res {
				if r.Level != plan.PolicyDeny || r.Policy != "p" {
					t.Errorf("result %+v", r)
				}
				if strings.Contains(r.Message, "failed to evaluate") {
					t.Errorf("evaluation error: %s", r.Message)
				}
				got = append(got, strings.TrimSpace(r.Release+" "+r.Object))
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("violations %q, want %q", got, tc.want)
			}
		})
	}
}

func TestScope(t *testing.T) {
	set := mustCompile(t, `
policy "o" { condition = "object.kind != ''" }
policy "r" { condition = "release.name != ''" }
policy "p" { condition = "plan.stack != ''" }
policy "m" {
  condition          = "true"
  message_expression = "object.name"
}
`)
	for name, want := range map[string]policy.Scope{"o": policy.ScopeObject, "r": policy.ScopeRelease, "p": policy.ScopePlan, "m": policy.ScopeObject} {
		if got, _ := set.Scope(name); got != want {
			t.Errorf("%s: scope %s, want %s", name, got, want)
		}
	}
}

func TestLevelsAndMessages(t *testing.T) {
	res := evaluate(t, `
policy "few_replicas" {
  level              = "warn"
  condition          = "object.kind != 'Deployment' || object.after.spec.replicas >= 2"
  message_expression = "'%s has %d replicas'.format([object.name, object.after.spec.replicas])"
}
policy "downgrade" {
  condition = "release.chart.after.version >= release.chart.before.version"
}
`)
	if len(res) != 3 {
		t.Fatalf("results %+v", res)
	}
	if r := res[0]; r.Policy != "downgrade" || r.Level != plan.PolicyDeny || r.Message != "policy downgrade does not hold" || r.Release != "release.a" {
		t.Errorf("downgrade: %+v", r)
	}
	// release.b is a no-op with no chart: evaluating it fails, and a
	// failure is a deny.
	if r := res[1]; r.Policy != "downgrade" || r.Release != "release.b" || !strings.Contains(r.Message, "failed to evaluate") {
		t.Errorf("downgrade on b: %+v", r)
	}
	if r := res[2]; r.Policy != "few_replicas" || r.Level != plan.PolicyWarn || r.Message != "web has 1 replicas" || r.Object != "apps/v1 Deployment apps/web" {
		t.Errorf("few_replicas: %+v", r)
	}
}

// TestMasked: sensitive values are masked in what a policy sees, and in
// what its message prints.
func TestMasked(t *testing.T) {
	res := evaluate(t, `
policy "sees_mask" {
  condition          = "release.name != 'a' || release.values.db.pass != '(sensitive)'"
  message_expression = "'pass is ' + release.values.db.pass"
}
policy "prints_mask" {
  condition          = "object.kind != 'Secret'"
  message_expression = "'secret holds ' + object.after.data.pass"
}
policy "echoes" {
  condition          = "release.name != 'a' || release.values.db.host != 'db'"
  message_expression = "'x hunter2-secret y'"
}
`)
	if len(res) != 3 {
		t.Fatalf("results %+v", res)
	}
	for _, r := range res {
		if strings.Contains(r.Message, "hunter2") {
			t.Errorf("%s leaks: %s", r.Policy, r.Message)
		}
	}
	if res[2].Message != "pass is (sensitive)" {
		t.Errorf("sees_mask: %+v", res[2])
	}
}

func TestEvaluationError(t *testing.T) {
	res := evaluate(t, `policy "replicas" {
  level     = "warn"
  condition = "object.after.spec.replicas >= 2"
}`)
	// The ConfigMap (deleted: after is null) and the Secret (no spec)
	// fail; the Deployment violates.
	var failed []string
	for _, r := range res {
		if strings.Contains(r.Message, "failed to evaluate") {
			if r.Level != plan.PolicyDeny || r.Policy != "replicas" || !strings.Contains(r.Message, "policy replicas") {
				t.Errorf("failure %+v", r)
			}
			failed = append(failed, r.Object)
		}
	}
	if strings.Join(failed, "|") != "v1 ConfigMap apps/web-config|v1 Secret apps/web-secret" {
		t.Errorf("failed on %q; results %+v", failed, res)
	}
}

func TestCostLimit(t *testing.T) {
	digits := "[0,1,2,3,4,5,6,7,8,9]"
	cond := digits + ".all(a, " + digits + ".all(b, " + digits + ".all(c, " + digits + ".all(d, " + digits + ".all(e, " + digits + ".all(f, " + digits + ".all(g, true)))))))"
	set := mustCompile(t, `policy "runaway" { condition = "`+cond+`" }`)
	res, err := set.Evaluate(context.Background(), testPlan())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Level != plan.PolicyDeny || !strings.Contains(res[0].Message, "cost limit") {
		t.Fatalf("results %+v", res)
	}
}

func TestCompileErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		src, summary, at string
	}{
		"syntax":       {"policy \"p\" {\n  condition = \"object.kind ==\"\n}\n", "Invalid CEL in policy condition", "policies.hcl:2,"},
		"undeclared":   {"policy \"p\" {\n  condition = \"objet.kind == 'x'\"\n}\n", "Invalid CEL in policy condition", "policies.hcl:2,16"},
		"not a bool":   {"policy \"p\" {\n  condition = \"1 + 2\"\n}\n", "Invalid policy condition", "policies.hcl:2,"},
		"message type": {"policy \"p\" {\n  condition = \"true\"\n  message_expression = \"1\"\n}\n", "Invalid policy message_expression", "policies.hcl:3,"},
		"bad level":    {"policy \"p\" {\n  level = \"block\"\n  condition = \"true\"\n}\n", "Invalid policy level", "policies.hcl:2,"},
		"reference":    {"policy \"p\" {\n  condition = var.x\n}\n", "Invalid policy attribute", "policies.hcl:2,"},
		"no condition": {"policy \"p\" {\n  message = \"m\"\n}\n", "Missing required argument", "policies.hcl:1,"},
		// A field of a declared type: a string is not a condition.
		"field not a bool": {"policy \"p\" {\n  condition = \"object.kind\"\n}\n", "Invalid policy condition", "policies.hcl:2,15"},
		"unknown field":    {"policy \"p\" {\n  condition = \"'team' in release.lables\"\n}\n", "Invalid CEL in policy condition", "policies.hcl:2,"},
		// HCL interpolation is not a policy's: no "Empty policy condition".
		"interpolation": {"locals {\n  x = \"y\"\n}\npolicy \"p\" {\n  condition = \"release.name != '${local.x}'\"\n}\n", "Invalid policy attribute", "policies.hcl:5,"},
	} {
		t.Run(name, func(t *testing.T) {
			_, diags := compile(t, tc.src, policy.Options{})
			if !diags.HasErrors() {
				t.Fatal("no error")
			}
			d := diags[0]
			if d.Summary != tc.summary || d.Subject == nil || len(diags.Errs()) != 1 {
				t.Fatalf("diagnostics %v, want one: %s", diags, tc.summary)
			}
			at := fmt.Sprintf("%s:%d,%d", filepath.Base(d.Subject.Filename), d.Subject.Start.Line, d.Subject.Start.Column)
			if !strings.HasPrefix(at, tc.at) {
				t.Errorf("at %s, want %s (%v)", at, tc.at, d)
			}
		})
	}
}

// TestDuplicateNames: two policies of one name, in the stack and in a
// --policy file, are a diagnostic naming both files.
func TestDuplicateNames(t *testing.T) {
	dir := t.TempDir()
	cfg, diags := config.LoadSources(dir, map[string][]byte{"stack.hcl": []byte("policy \"p\" {\n  condition = \"true\"\n}\n")})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	org := filepath.Join(t.TempDir(), "org.hcl")
	if err := os.WriteFile(org, []byte("\n\npolicy \"p\" {\n  condition = \"false\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	diags = cfg.LoadPolicyPaths([]string{filepath.Dir(org)})
	if len(diags) != 1 || diags[0].Summary != `Duplicate policy "p"` {
		t.Fatalf("diagnostics %v", diags)
	}
	for _, want := range []string{filepath.Join(dir, "stack.hcl") + " (line 1)", org + " (line 3)"} {
		if !strings.Contains(diags[0].Detail, want) {
			t.Errorf("detail %q does not name %s", diags[0].Detail, want)
		}
	}
}

// TestPolicyFilesOnlyPolicies: a --policy file may hold nothing else.
func TestPolicyFilesOnlyPolicies(t *testing.T) {
	cfg, _ := config.LoadSources(t.TempDir(), map[string][]byte{"stack.hcl": []byte("")})
	f := filepath.Join(t.TempDir(), "org.hcl")
	if err := os.WriteFile(f, []byte("release \"x\" {\n  chart = \"y\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if diags := cfg.LoadPolicyPaths([]string{f}); !diags.HasErrors() {
		t.Fatal("a release block in a policy file was accepted")
	}
}

// TestReleaseLabelsAndKubernetesLibraries: release.labels is the release
// block's labels, and the API server's CEL libraries are declared
// (lists' sum, min, max, indexOf, lastIndexOf, isSorted; quantity, regex,
// semver, urls, ip, cidr, format).
func TestReleaseLabelsAndKubernetesLibraries(t *testing.T) {
	src := `
policy "team_label" {
  condition = "'team' in release.labels && release.labels.team != ''"
}
policy "libraries" {
  condition = <<-CEL
    [1, 2, 3].sum() == 6 && [3, 1, 2].min() == 1 && [3, 1, 2].max() == 3 &&
    [1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2 && [1, 2, 3].isSorted() &&
    quantity('1Gi').isGreaterThan(quantity('512Mi')) && 'abc'.find('b+') == 'b' &&
    isSemver('1.2.3') && semver('1.2.3').major() == 1 && url('https://x.dev/p').getHost() == 'x.dev' &&
    ip('10.0.0.1').family() == 4 && cidr('10.0.0.0/8').containsIP('10.1.2.3') &&
    format.dns1123Label().validate('web').hasValue() == false
  CEL
}
`
	res, err := mustCompile(t, src).Evaluate(context.Background(), testPlan())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res {
		got = append(got, r.Policy+" "+r.Release+": "+r.Message)
	}
	// release.b has no labels: only it violates team_label.
	if strings.Join(got, "|") != "team_label release.b: policy team_label does not hold" {
		t.Errorf("results %q", got)
	}
}
