package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/stack/config"
)

// Issue 21: what a new user hit on a first day with a real stack.

// `cd DIR && convoy apply` on a stack without a stack block names the stack
// after DIR, not "." (which no label selector takes).
func TestStackNamedAfterWorkingDirectory(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := filepath.Join(t.TempDir(), ns)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(fmt.Sprintf("release \"db\" {\n  chart     = %q\n  namespace = %q\n}\n", appChart(t), ns)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if code, out, errOut := runConvoy(t, "plan", "--kubeconfig", kc); code != 0 || !strings.Contains(out, "Plan: 1 to install") {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if h := statusOf(t, ns, "db"); len(h) != 1 || h[0].Labels[release.StackLabel] != ns {
		t.Fatalf("db's record: %s, labels %v", revisions(h), h[0].Labels)
	}
}

// A values file that breaks the chart's schema and a local chart that is
// not there are the same diagnostics, at the same source ranges, in every
// command: the values file's line of the offending key, the chart
// attribute's line in the stack.
func TestChartDiagnosticsAlikeInEveryCommand(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	schema, err := filepath.Abs(filepath.Join("testdata", "charts", "schema"))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeStack(t, fmt.Sprintf(`stack %[1]q {
  default_namespace = %[1]q
}

release "cache" {
  chart  = %[2]q
  values = [
    { replicas = 1 },
    file("values/cache.yaml"),
  ]
}

release "gone" {
  chart = "./charts/gone"
}
`, ns, schema))
	if err := os.MkdirAll(filepath.Join(dir, "values"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "values", "cache.yaml"), []byte("# the cache\nname: cache\nreplicas: many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NO_COLOR", "1")
	t.Setenv("CONVOY_CACHE_DIR", t.TempDir())
	want := []string{
		"Error: Values break the chart's schema",
		"on " + filepath.Join(dir, "values", "cache.yaml") + " line 3:",
		"3: replicas: many",
		"release.cache: the values do not meet the chart's values.schema.json: replicas (schema of chart",
		"schema): got string, want integer.",
		"Error: Not a chart",
		"on " + filepath.Join(dir, "stack.hcl") + ` line 14, in release "gone":`,
		`14:   chart = "./charts/gone"`,
	}
	for _, args := range [][]string{
		{"validate", "-C", dir},
		{"plan", "-C", dir, "--kubeconfig", kc},
		{"apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"},
		{"render", "-C", dir},
	} {
		t.Run(args[0], func(t *testing.T) {
			code, out, errOut := runConvoy(t, args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, w := range want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q", w)
				}
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
			}
		})
	}
}

// Every command that runs releases takes --no-progress, so that a script
// passes the same flags to all of them.
func TestNoProgressOnEveryCommandThatRunsReleases(t *testing.T) {
	for _, name := range []string{"apply", "destroy", "rollback", "recover", "test"} {
		cmd, _, err := newRootCmd(streams{}).Find([]string{name})
		if err != nil || cmd.Name() != name {
			t.Fatalf("%s: %v", name, err)
		}
		if err := cmd.ParseFlags([]string{"--no-progress"}); err != nil {
			t.Errorf("%s --no-progress: %v", name, err)
		}
	}
	code, _, errOut := runConvoy(t, "rollback", "api", "--no-progress", "-C", t.TempDir())
	if code != 1 || strings.Contains(errOut, "unknown flag") {
		t.Errorf("rollback api --no-progress: exit %d\n%s", code, errOut)
	}
}

// A reader of the output that exits at once (`convoy output | true`) ends
// the output quietly: nothing on standard error, as other tools do.
func TestClosedOutputPipeIsQuiet(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	var errb strings.Builder
	code := executeOn(t.Context(), []string{"version"}, strings.NewReader(""), w, &errb)
	if code != 0 || errb.String() != "" {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// A destroy of one release names the releases that depend on it and what
// they read; --include-dependents uninstalls them too, dependents first.
func TestTargetedDestroyNamesDependents(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	chart := appChart(t)
	dir := writeStack(t, fmt.Sprintf(`stack %[2]q {
  default_namespace = %[2]q
}
release "db" {
  chart = %[1]q
}
release "keycloak" {
  chart  = %[1]q
  values = [{ message = "db at ${release.db.name}.${release.db.namespace}" }]
}
release "exporter" {
  chart      = %[1]q
  depends_on = [release.db]
}
release "web" {
  chart  = %[1]q
  values = [{ message = release.keycloak.name }]
}
release "other" {
  chart = %[1]q
}
`, chart, ns))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runConvoy(t, "plan", "--destroy", "--target", "release.db", "-C", dir, "--kubeconfig", kc)
	want := "Warning: release.db: release.exporter, release.keycloak depend on it and stay installed: " +
		"release.exporter depends_on release.db; release.keycloak reads release.db.name, release.db.namespace. " +
		"--include-dependents uninstalls them too, with release.web, which depends on them"
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "Plan: 1 to uninstall.") {
		t.Fatalf("plan --destroy --target release.db: exit %d, want %q\n%s\n%s", code, want, out, errOut)
	}
	if code, _, errOut := runConvoy(t, "plan", "--include-dependents", "--target", "release.db", "-C", dir, "--kubeconfig", kc); code != 1 || !strings.Contains(errOut, "--include-dependents is for --destroy") {
		t.Errorf("plan --include-dependents without --destroy: exit %d\n%s", code, errOut)
	}

	code, out, errOut = runConvoy(t, "destroy", "--target", "release.db", "--include-dependents", "-C", dir, "--kubeconfig", kc, "--auto-approve")
	if code != 0 || !strings.Contains(out, "Plan: 4 to uninstall.") ||
		!strings.Contains(out, "Warning: release.keycloak: uninstalled with what it depends on (--include-dependents): release.keycloak reads release.db.name, release.db.namespace") ||
		!strings.Contains(out, "Warning: release.web: uninstalled with what it depends on (--include-dependents): release.web reads release.keycloak.name") {
		t.Fatalf("destroy --include-dependents: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, name := range []string{"db", "keycloak", "exporter", "web"} {
		if h := statusOf(t, ns, name); len(h) != 0 {
			t.Errorf("%s was not uninstalled: %s", name, revisions(h))
		}
	}
	if got := revisions(statusOf(t, ns, "other")); got != "1:deployed" {
		t.Errorf("other: %s, want it left alone", got)
	}
}

// Adding count to a release moves it to [0] and keeps its Helm name, as
// Terraform moves an instance implicitly; removing count moves [0] back.
// The plan says so, and neither uninstalls anything.
func TestCountAddedOrRemovedKeepsTheReleaseName(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	chart := appChart(t)
	stack := func(keda, web string) string {
		return fmt.Sprintf("stack %[2]q {\n  default_namespace = %[2]q\n}\nrelease \"keda\" {\n  chart = %[1]q\n%[3]s}\nrelease \"web\" {\n  chart = %[1]q\n%[4]s}\nrelease \"reader\" {\n  chart  = %[1]q\n  values = [{ message = release.keda[0].name }]\n}\n", chart, ns, keda, web)
	}
	dir := writeStack(t, stack("", "  count = 1\n"))
	write := func(hcl string) {
		if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// keda without count; reader reads release.keda[0] only once it has one.
	write(strings.Replace(stack("", "  count = 1\n"), "release.keda[0].name", "release.keda.name", 1))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}

	// count added to keda, removed from web.
	write(stack("  count = 2\n", ""))
	before := config.ReadCounts()
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	// Once as loaded, once again with the names the moved instances
	// keep (run's keepMovedNames): reader's values read keda[0]'s name.
	if n := config.ReadCounts().Sub(before).Evaluations; n != 2 {
		t.Errorf("the plan of the moves evaluated the stack %d times, want 2", n)
	}
	for _, want := range []string{
		`Warning: release.keda[0]: moved from release.keda (count was added to its release block, as Terraform moves an instance implicitly): it keeps its Helm release name "keda"`,
		`Warning: release.web: moved from release.web[0] (count was removed from its release block, as Terraform moves an instance implicitly): it keeps its Helm release name "web-0"`,
		"Plan: 1 to install, 0 to upgrade, 0 to uninstall, 3 unchanged.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q", want)
		}
	}
	if code != 0 || t.Failed() {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	for name, want := range map[string]string{"keda": "1:deployed", "keda-0": "", "keda-1": "1:deployed", "web-0": "1:deployed", "web": "", "reader": "1:deployed"} {
		if got := revisions(statusOf(t, ns, name)); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	code, out, _ = runConvoy(t, "status", "-C", dir, "--kubeconfig", kc)
	if code != 0 || !regexp.MustCompile(`(?m)^keda\s+`+ns+`\s+1\s+deployed`).MatchString(out) || !regexp.MustCompile(`(?m)^web-0\s+`+ns+`\s+1\s+deployed`).MatchString(out) {
		t.Errorf("status: exit %d\n%s", code, out)
	}
	before = config.ReadCounts()
	if code, out, _ := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Errorf("plan after apply: exit %d, want no changes\n%s", code, out)
	}
	// keda[0] still keeps the name keda, so its name is found in the
	// records again, and the stack evaluated again with it.
	if n := config.ReadCounts().Sub(before).Evaluations; n != 2 {
		t.Errorf("the plan after the moves evaluated the stack %d times, want 2", n)
	}

	// A stack whose instances moved nowhere is evaluated once.
	write(strings.Replace(stack("", "  count = 1\n"), "release.keda[0].name", "release.keda.name", 1))
	before = config.ReadCounts()
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc); code != 0 {
		t.Fatalf("plan with keda's count removed again: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := config.ReadCounts().Sub(before).Evaluations; n != 1 {
		t.Errorf("a plan that finds no move evaluated the stack %d times, want once", n)
	}
}
