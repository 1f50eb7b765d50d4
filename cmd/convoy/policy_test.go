package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// policyStack is release "a" of the app chart with the extra ConfigMap
// on or off, and the keep_config policy and a warning on
// Deployments with fewer than two replicas.
func policyStack(ns string, extra bool) string {
	return fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "a" {
  chart  = %[2]q
  values = [{ extraConfigMap = %[3]t }]
}
policy "keep_config" {
  level     = "deny"
  condition = "!(object.kind == 'ConfigMap' && object.action == 'delete')"
  message   = "ConfigMaps are not deleted here"
}
policy "two_replicas" {
  level     = "warn"
  condition = "object.kind != 'Deployment' || object.after == null || object.after.spec.replicas >= 2"
  message   = "a Deployment with fewer than two replicas"
}
`, ns, appChartPath(), extra)
}

func appChartPath() string {
	p, _ := filepath.Abs(filepath.Join("..", "..", "internal", "cluster", "release", "testdata", "charts", "app"))
	return p
}

// TestPolicyDenialStopsPlanAndApply is the acceptance list for a
// deny policy: the plan names it and exits 1 (text, --json, --markdown),
// apply and a saved plan refuse it and write no revision, and
// --allow-policy overrides it, recorded in the release history.
func TestPolicyDenialStopsPlanAndApply(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, policyStack(ns, true))

	// A warning changes no exit code: a plan with changes exits 2.
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "a Deployment with fewer than two replicas") || !strings.Contains(out, "two_replicas (warn)") {
		t.Fatalf("plan with a warning: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}

	// The new values remove the extra ConfigMap: keep_config denies.
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(policyStack(ns, false)), 0o644); err != nil {
		t.Fatal(err)
	}
	cm := "v1 ConfigMap " + ns + "/a-extra"
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 1 {
		t.Fatalf("denied plan: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"release.a", "keep_config (deny) on " + cm + ": ConfigMaps are not deleted here", "Denied by keep_config"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "keep_config") {
		t.Errorf("the error does not name the policy: %s", errOut)
	}

	code, out, _ = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--json")
	var doc struct {
		PolicyResults []struct{ Policy, Level, Message, Release, Object string } `json:"policy_results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 {
		t.Fatalf("plan --json: exit %d, %v\n%s", code, err, out)
	}
	found := false
	for _, r := range doc.PolicyResults {
		if r.Policy == "keep_config" && r.Level == "deny" && r.Release == "release.a" && r.Object == cm {
			found = true
		}
	}
	if !found {
		t.Errorf("policy_results lacks the denial: %+v", doc.PolicyResults)
	}

	code, out, _ = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--markdown")
	if code != 1 || !strings.Contains(out, "Denied by policy (keep_config)") || !strings.Contains(out, cm) {
		t.Errorf("plan --markdown: exit %d\n%s", code, out)
	}

	code, out, errOut = runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve")
	if code == 0 || !strings.Contains(errOut, "keep_config") || !strings.Contains(out, "keep_config") {
		t.Fatalf("apply of a denied plan: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := revisions(statusOf(t, ns, "a")); got != "1:deployed" {
		t.Fatalf("a denied apply wrote a revision: %s", got)
	}

	planFile := filepath.Join(t.TempDir(), "plan.cvp")
	if code, _, _ := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--out", planFile); code != 1 {
		t.Fatalf("plan --out of a denied plan: exit %d", code)
	}
	code, _, errOut = runConvoy(t, "apply", planFile, "--kubeconfig", kc)
	if code == 0 || !strings.Contains(errOut, "keep_config") {
		t.Fatalf("apply of a denied saved plan: exit %d\n%s", code, errOut)
	}
	if got := revisions(statusOf(t, ns, "a")); got != "1:deployed" {
		t.Fatalf("a denied saved plan wrote a revision: %s", got)
	}

	// The explicit override: saved in the plan, written in the history.
	code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--out", planFile, "--allow-policy", "keep_config")
	if code != 0 || !strings.Contains(out, "deny, allowed") {
		t.Fatalf("plan --allow-policy: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", planFile, "--kubeconfig", kc); code != 0 {
		t.Fatalf("apply of the allowed plan: exit %d\n%s\n%s", code, out, errOut)
	}
	h := statusOf(t, ns, "a")
	if got := revisions(h); got != "1:superseded 2:deployed" {
		t.Fatalf("history %s", got)
	}
	if d := h[1].Info.Description; d != "Upgrade complete (policies allowed: keep_config)" {
		t.Errorf("description %q", d)
	}
	if code, _, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--allow-policy", "kep_config"); code != 1 || !strings.Contains(errOut, `no policy "kep_config"`) {
		t.Errorf("an override of a policy that does not exist: exit %d, %s", code, errOut)
	}
}

// TestPolicyFromOutsideTheStack: --policy DIR adds an organisation's rules.
func TestPolicyFromOutsideTheStack(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "a" {
  chart  = %[2]q
  values = [{ image = { tag = "latest" } }]
}
`, ns, appChartPath()))
	org := t.TempDir()
	if err := os.WriteFile(filepath.Join(org, "tags.hcl"), []byte(`
policy "no_latest" {
  condition          = "release.values == null || !has(release.values.image) || release.values.image.tag != 'latest'"
  message_expression = "release.name + ' runs the latest tag'"
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode", "--policy", org)
	if code != 1 || !strings.Contains(out, "no_latest (deny): a runs the latest tag") {
		t.Fatalf("plan --policy: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 2 {
		t.Fatalf("plan without --policy: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestPolicySyntaxErrorValidates: validate names the file and line of a
// bad condition, with no cluster anywhere.
func TestPolicySyntaxErrorValidates(t *testing.T) {
	dir := writeStack(t, `
release "a" {
  chart = "./nowhere"
}

policy "broken" {
  condition = "object.kind == "
}
`)
	t.Setenv("KUBECONFIG", "/nonexistent")
	code, out, errOut := runConvoy(t, "validate", "-C", dir)
	if code == 0 || !strings.Contains(out+errOut, "stack.hcl line 7") || !strings.Contains(out+errOut, "Invalid CEL in policy condition") {
		t.Fatalf("validate: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestPolicyPaths(t *testing.T) {
	got := policyPaths([]string{"flag.hcl"}, "/org/policies::/team")
	if strings.Join(got, ",") != "/org/policies,/team,flag.hcl" {
		t.Fatalf("policy paths %q", got)
	}
}
