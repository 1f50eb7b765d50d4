package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func varStack(chart, ns string) string {
	return `
stack "` + ns + `" {
  default_namespace = "` + ns + `"
}
variable "message" {
  type = string
}
variable "token" {
  type      = string
  sensitive = true
}
release "api" {
  chart  = "` + chart + `"
  values = [{ message = var.message, token = var.token }]
}
`
}

// A plan saved with --var, --var-file and -C in one directory applies from
// another with no stack flags at all, and refuses a --var that differs.
func TestSavedPlanTravelsWithItsDirectoryAndVariables(t *testing.T) {
	ns := cluster.Namespace(t)
	t.Setenv("KUBECONFIG", cluster.Kubeconfig())
	dir := writeStack(t, varStack(appChart(t), ns))
	varFile := filepath.Join(t.TempDir(), "secret.vars.hcl")
	if err := os.WriteFile(varFile, []byte(`token = "tok-canary-7781"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	t.Chdir(work)
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--var", "message=from-plan", "--var-file", varFile, "--out", "my plan.cvp")
	if code != 0 || !strings.Contains(errOut, "convoy apply 'my plan.cvp'") || !strings.Contains(errOut, "variable values") {
		t.Fatalf("plan --out: exit %d\n%s\n%s", code, out, errOut)
	}
	// The var file is gone by apply time: the plan carries its contents.
	if err := os.Remove(varFile); err != nil {
		t.Fatal(err)
	}

	code, out, errOut = runConvoy(t, "show", filepath.Join(work, "my plan.cvp"))
	if code != 0 || !strings.Contains(out, "in "+dir) || !strings.Contains(out, "--var message") ||
		!strings.Contains(out, "+ release.api (install)") || strings.Contains(out, "tok-canary-7781") {
		t.Fatalf("show: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := runConvoy(t, "show", filepath.Join(work, "my plan.cvp"), "--json"); code != 0 || !strings.HasPrefix(out, "{") || strings.Contains(out, "tok-canary-7781") {
		t.Fatalf("show --json: exit %d\n%s", code, out)
	}

	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	planPath := filepath.Join(work, "my plan.cvp")
	code, _, errOut = runConvoy(t, "apply", planPath, "--var", "message=other")
	if code != 1 || !strings.Contains(errOut, "--var message differs") {
		t.Fatalf("apply with a differing --var: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runConvoy(t, "apply", planPath, "-C", work)
	if code != 1 || !strings.Contains(errOut, "was made for the stack in "+dir) {
		t.Fatalf("apply with another -C: exit %d\n%s", code, errOut)
	}
	// The same API server under another name is another cluster to the
	// plan: it observed only the one it was made against.
	kc, err := os.ReadFile(cluster.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(other, []byte(strings.ReplaceAll(string(kc), "https://127.0.0.1:", "https://localhost:")), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runConvoy(t, "apply", planPath, "--kubeconfig", other)
	if code != 1 || !strings.Contains(errOut, "was made against the default cluster at https://127.0.0.1:") {
		t.Fatalf("apply against another cluster: exit %d\n%s", code, errOut)
	}
	code, out, errOut = runConvoy(t, "apply", planPath)
	if code != 0 {
		t.Fatalf("apply of the saved plan from elsewhere: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := revisions(statusOf(t, ns, "api")); got != "1:deployed" {
		t.Fatalf("api: %s", got)
	}
	if data, _ := cmData(t, ns, "api-config"); data["message"] != "from-plan" {
		t.Fatalf("applied message %q", data["message"])
	}
}

// A saved plan carries a snapshot of its stack directory: it applies from
// an empty directory after the stack directory (and the local chart in it)
// was deleted, and says it is stale when the directory still exists but
// changed.
func TestSavedPlanAppliesAfterItsStackDirectoryIsGone(t *testing.T) {
	ns := cluster.Namespace(t)
	t.Setenv("KUBECONFIG", cluster.Kubeconfig())
	root := t.TempDir()
	dir := filepath.Join(root, "shop")
	copyTree(t, appChart(t), filepath.Join(dir, "charts", "app"))
	stack := varStack("./charts/app", ns)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack), 0o644); err != nil {
		t.Fatal(err)
	}
	planPath := filepath.Join(t.TempDir(), "gone.cvp")
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--var", "message=from-snapshot", "--var", "token=tok-snap-3141", "--out", planPath)
	if code != 0 {
		t.Fatalf("plan --out: exit %d\n%s\n%s", code, out, errOut)
	}

	// Still there, but edited: the plan is stale.
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(stack+"\n# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runConvoy(t, "apply", planPath); code != 1 || !strings.Contains(errOut, "the stack configuration (files or variable values) changed since the plan was made") {
		t.Fatalf("apply after an edit of the stack: exit %d\n%s", code, errOut)
	}

	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, out, errOut = runConvoy(t, "apply", planPath)
	if code != 0 {
		t.Fatalf("apply of the saved plan with its directory gone: exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "tok-snap-3141") {
		t.Fatalf("the sensitive value leaked:\n%s\n%s", out, errOut)
	}
	if got := revisions(statusOf(t, ns, "api")); got != "1:deployed" {
		t.Fatalf("api: %s", got)
	}
	if data, _ := cmData(t, ns, "api-config"); data["message"] != "from-snapshot" {
		t.Fatalf("applied message %q", data["message"])
	}
}

// A saved plan is applied with the CONVOY_VAR_* values it was made with,
// and with the stack's *.auto.vars.hcl files as they are now: a changed
// one makes the plan stale.
func TestSavedPlanEnvironmentAndAutoFiles(t *testing.T) {
	ns := cluster.Namespace(t)
	t.Setenv("KUBECONFIG", cluster.Kubeconfig())
	dir := writeStack(t, varStack(appChart(t), ns))
	auto := filepath.Join(dir, "message.auto.vars.hcl")
	if err := os.WriteFile(auto, []byte(`message = "from-auto"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	planPath := filepath.Join(t.TempDir(), "p.cvp")
	t.Setenv("CONVOY_VAR_token", "tok-1")
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--out", planPath); code != 0 {
		t.Fatalf("plan --out: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "show", planPath); code != 0 || !strings.Contains(out, "with CONVOY_VAR_token") || strings.Contains(out, "tok-1") {
		t.Fatalf("show: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Setenv("CONVOY_VAR_token", "tok-2")
	code, _, errOut := runConvoy(t, "apply", planPath)
	if code != 1 || !strings.Contains(errOut, "the environment variable CONVOY_VAR_token differs") {
		t.Fatalf("apply with another CONVOY_VAR_token: exit %d\n%s", code, errOut)
	}
	t.Setenv("CONVOY_VAR_token", "tok-1")
	if err := os.WriteFile(auto, []byte(`message = "changed"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runConvoy(t, "apply", planPath)
	if code == 0 || !strings.Contains(errOut, "stale") {
		t.Fatalf("apply after the auto file changed: exit %d\n%s", code, errOut)
	}
	if err := os.WriteFile(auto, []byte(`message = "from-auto"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runConvoy(t, "apply", planPath); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if data, _ := cmData(t, ns, "api-config"); data["message"] != "from-auto" {
		t.Fatalf("applied message %q", data["message"])
	}
}

// Issue 21's acceptance: a sensitive value "mess" leaves the chart's
// value key "message" readable in the plan, and is masked as a value.
func TestShortSensitiveValueLeavesKeysReadable(t *testing.T) {
	ns := cluster.Namespace(t)
	t.Setenv("KUBECONFIG", cluster.Kubeconfig())
	dir := writeStack(t, varStack(appChart(t), ns))
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--var", "message=hello", "--var", "token=mess")
	if code != 0 || !strings.Contains(out, "+ message: \"hello\"") || !strings.Contains(out, "+ token: (sensitive)") ||
		strings.Contains(out, "(sensitive)age") || !strings.Contains(out, "shorter than 8 characters") {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
}

// A saved plan's apply, which renders nothing, settles the records it
// writes as an apply of a fresh plan does: the next plan proves the
// release unchanged by its fingerprint, reading no record whole, for a
// chart that reads capabilities (kept whole at apply) and one that does
// not (only its facts kept).
func TestSavedPlanApplySettlesTheRecord(t *testing.T) {
	ns := cluster.Namespace(t)
	t.Setenv("KUBECONFIG", cluster.Kubeconfig())
	dir := writeStack(t, `
stack "`+ns+`" {
  default_namespace = "`+ns+`"
}
release "api" {
  chart = "`+appChart(t)+`"
}
release "caps" {
  chart = "`+testChart(t, "incr-caps")+`"
}
`)
	planFile := filepath.Join(t.TempDir(), "plan.cvp")
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--out", planFile); code != 0 {
		t.Fatalf("plan --out: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", planFile); code != 0 {
		t.Fatalf("apply of the saved plan: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--detailed-exitcode", "--stats")
	if code != 0 || !strings.Contains(errOut, "releases-unchanged-by-fingerprint=2 releases-planned-in-full=0") || !strings.Contains(errOut, "record-reads=0") {
		t.Fatalf("plan after the saved plan's apply: exit %d\n%s\n%s", code, out, errOut)
	}
}
