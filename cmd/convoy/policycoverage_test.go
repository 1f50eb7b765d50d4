package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/testfiles"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// coverageCharts writes the charts of the policy coverage tests: db (a
// ConfigMap), exporter (a Deployment named like a postgres exporter,
// whose values read db's outputs in the stack) and migrate (a ConfigMap
// and a pre-install hook Job, as ingress-nginx's admission webhook jobs).
func coverageCharts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testfiles.Write(t, dir, map[string]string{
		"db/Chart.yaml":  "apiVersion: v2\nname: db\nversion: 1.0.0\n",
		"db/values.yaml": "message: hello\n",
		"db/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-conn
data:
  message: {{ .Values.message | quote }}
`,
		"exporter/Chart.yaml":  "apiVersion: v2\nname: exporter\nversion: 1.0.0\n",
		"exporter/values.yaml": "dbRevision: 0\n",
		"exporter/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-pg-exporter
spec:
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}-pg-exporter}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}-pg-exporter}
      annotations:
        db-revision: {{ .Values.dbRevision | quote }}
    spec:
      containers:
        - name: exporter
          image: registry.example/pg-exporter:1.0
`,
		"migrate/Chart.yaml": "apiVersion: v2\nname: migrate\nversion: 1.0.0\n",
		"migrate/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  k: v
`,
		"migrate/templates/job.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-admission-create
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: create
          image: registry.example/kube-webhook-certgen:1.0
`,
	})
	return dir
}

// TestPolicyOnReleaseRenderedAtApply: a release whose values read
// another's outputs is rendered only at apply; policies are evaluated on
// what it renders then. The plan says so; apply stops it (exit 1, naming
// the policy) before anything of it is applied, its dependency applied;
// --allow-policy given to apply lets it through; and later plans of the
// unchanged stack, incremental or full, still report the denial.
func TestPolicyOnReleaseRenderedAtApply(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	charts := coverageCharts(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
variable "message" {
  default = "one"
}
release "db" {
  chart  = %[2]q
  values = [{ message = var.message }]
}
release "exporter" {
  chart  = %[3]q
  values = [{ dbRevision = release.db.revision }]
}
policy "probe" {
  condition = "!(object.kind == 'Deployment' && object.name.contains('pg-exporter'))"
  message   = "no exporters here"
}
`, ns, filepath.Join(charts, "db"), filepath.Join(charts, "exporter")))
	deployment := "apps/v1 Deployment " + ns + "/exporter-pg-exporter"

	// The plan says which release is checked at apply, in every view.
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 2 {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"policies: checked at apply", "Policies are checked at apply on release.exporter"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--json")
	var doc struct {
		Releases []struct {
			Address         string `json:"address"`
			KnownAfterApply bool   `json:"known_after_apply"`
			PoliciesAtApply bool   `json:"policies_at_apply"`
		} `json:"releases"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	for _, r := range doc.Releases {
		if want := r.Address == "release.exporter"; r.PoliciesAtApply != want || r.KnownAfterApply != want {
			t.Errorf("%s: policies_at_apply %t, known_after_apply %t", r.Address, r.PoliciesAtApply, r.KnownAfterApply)
		}
	}
	if _, out, _ = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--markdown"); !strings.Contains(out, "Checked by policies at apply") || !strings.Contains(out, "`release.exporter`") {
		t.Errorf("plan --markdown does not say release.exporter is checked at apply:\n%s", out)
	}

	// Apply: db is applied; exporter is rendered, denied, and nothing of
	// it is applied.
	code, out, errOut = runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve")
	if code != 1 {
		t.Fatalf("apply: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"policies deny release.exporter as rendered at apply: probe", "deny probe on release.exporter: " + deployment + ": no exporters here", "--allow-policy probe"} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("apply output lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
	if got := revisions(statusOf(t, ns, "db")); got != "1:deployed" {
		t.Errorf("db: %s", got)
	}
	if got := revisions(statusOf(t, ns, "exporter")); got != "" {
		t.Errorf("the denied release has records: %s", got)
	}
	cs, err := kubernetes.NewForConfig(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cs.AppsV1().Deployments(ns).Get(ctx, "exporter-pg-exporter", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the denied Deployment: %v", err)
	}

	// --allow-policy on apply lets it through at apply: db changes, so
	// exporter is rendered at apply again.
	code, out, errOut = runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--var", "message=two", "--allow-policy", "probe")
	if code != 0 {
		t.Fatalf("apply --allow-policy: exit %d\n%s\n%s", code, out, errOut)
	}
	h := statusOf(t, ns, "exporter")
	if got := revisions(h); got != "1:deployed" {
		t.Fatalf("exporter: %s", got)
	}
	if d := h[0].Info.Description; !strings.Contains(d, "policies allowed: probe") {
		t.Errorf("exporter's description %q", d)
	}
	if want := "warn probe (allowed) on release.exporter: " + deployment; !strings.Contains(errOut, want) {
		t.Errorf("the allowed denial is not shown (%q):\n%s\n%s", want, out, errOut)
	}

	// The stack is unchanged now; its plans still report the denial of
	// what it applied, incrementally (from the deployed record) and in
	// full.
	for _, refresh := range []string{"incremental", "full"} {
		code, out, errOut = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--var", "message=two", "--refresh", refresh, "--detailed-exitcode")
		if code != 1 {
			t.Errorf("plan --refresh=%s of the unchanged stack: exit %d, want 1\n%s\n%s", refresh, code, out, errOut)
		}
		if want := "probe (deny) on release.exporter: " + deployment + ": no exporters here"; !strings.Contains(out, want) {
			t.Errorf("plan --refresh=%s lacks %q:\n%s", refresh, want, out)
		}
		if !strings.Contains(out, "Plan: 0 to install, 0 to upgrade, 0 to uninstall, 2 unchanged.") {
			t.Errorf("plan --refresh=%s changes something:\n%s", refresh, out)
		}
	}
}

// TestPolicyOnHookObjects: policies see the objects hooks apply, with
// object.hook naming the events, and the JSON plan lists them.
func TestPolicyOnHookObjects(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	charts := coverageCharts(t)
	dir := writeStack(t, fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
release "webhook" {
  chart = %[2]q
}
policy "no_hook_jobs" {
  condition = "!(object.kind == 'Job' && object.hook.contains('pre-install'))"
  message_expression = "'hook ' + object.hook + ' runs a Job'"
}
policy "hooks_only" {
  level     = "warn"
  condition = "object.hook != '' || object.kind != 'ConfigMap'"
  message   = "an ordinary ConfigMap"
}
`, ns, filepath.Join(charts, "migrate")))
	job := "batch/v1 Job " + ns + "/webhook-admission-create"
	cm := "v1 ConfigMap " + ns + "/webhook-config"

	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 1 {
		t.Fatalf("plan: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"no_hook_jobs (deny) on " + job + " (pre-install hook): hook pre-install runs a Job",
		"hooks_only (warn) on " + cm + ": an ordinary ConfigMap",
		"Denied by no_hook_jobs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--json")
	var doc struct {
		Releases []struct {
			Objects []struct{ Ref, Action, Hook, Template string } `json:"objects"`
		} `json:"releases"`
		PolicyResults []struct{ Policy, Level, Object, Hook string } `json:"policy_results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 || len(doc.Releases) != 1 {
		t.Fatalf("plan --json: exit %d, %v\n%s", code, err, out)
	}
	var hooks []string
	for _, o := range doc.Releases[0].Objects {
		if o.Hook != "" {
			hooks = append(hooks, fmt.Sprintf("%s %s %s %s", o.Ref, o.Action, o.Hook, o.Template))
		}
	}
	if want := job + " create pre-install migrate/templates/job.yaml"; strings.Join(hooks, "|") != want {
		t.Errorf("hook objects %q, want %q", hooks, want)
	}
	denied := false
	for _, r := range doc.PolicyResults {
		if r.Policy == "no_hook_jobs" && r.Level == "deny" && r.Object == job && r.Hook == "pre-install" {
			denied = true
		}
	}
	if !denied {
		t.Errorf("policy_results lack the hook's denial: %+v", doc.PolicyResults)
	}
}
