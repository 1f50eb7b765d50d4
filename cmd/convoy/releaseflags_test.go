package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func rollbackStack(chart, ns, message string, neverReady bool) string {
	return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "api" {
  chart   = %[1]q
  values  = [{ message = %[3]q, neverReady = %[4]t, preRollbackHookFails = %[4]t }]
  wait    = false
  timeout = "5m"
}
`, chart, ns, message, neverReady)
}

// rollback's Helm flags override the release's settings: --wait and
// --timeout make a rollback to a never-ready revision fail within the
// flag's timeout (the release itself neither waits nor times out soon),
// --no-hooks skips its failing pre-rollback hook, which runs without it;
// --description and --history-max shape the record; history --max shows
// the newest revisions only.
func TestRollbackAndHistoryFlags(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, rollbackStack(appChart(t), ns, "v1", false))
	apply := func(message string, neverReady bool) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(rollbackStack(appChart(t), ns, message, neverReady)), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
			t.Fatalf("apply %s: exit %d\n%s\n%s", message, code, out, errOut)
		}
	}
	apply("v1", false)
	apply("v2", true) // never ready, with a failing pre-rollback hook
	apply("v3", false)

	start := time.Now()
	code, out, errOut := runConvoy(t, "rollback", "api", "2", "-C", dir, "--kubeconfig", kc, "--no-hooks", "--wait", "--timeout", "2s")
	if took := time.Since(start); code != 1 || took > 60*time.Second || strings.Contains(out+errOut, "pre-rollback") ||
		!strings.Contains(out, "api is at revision 4, failed") {
		t.Fatalf("rollback --no-hooks --wait --timeout 2s to a never-ready revision: exit %d after %s\n%s\n%s", code, took, out, errOut)
	}

	code, out, errOut = runConvoy(t, "rollback", "api", "2", "-C", dir, "--kubeconfig", kc, "--wait=hookOnly", "--timeout", "20s")
	if code != 1 || !strings.Contains(out+errOut, "pre-rollback hook") {
		t.Fatalf("rollback with its failing pre-rollback hook: exit %d\n%s\n%s", code, out, errOut)
	}

	code, out, errOut = runConvoy(t, "rollback", "api", "3", "-C", dir, "--kubeconfig", kc, "--description", "back to three", "--history-max", "3")
	if code != 0 || !strings.Contains(out, "Rollback was a success: api is at revision 6 (back to three).") {
		t.Fatalf("rollback --description --history-max: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := revisions(statusOf(t, ns, "api")); got != "4:failed 5:failed 6:deployed" {
		t.Fatalf("revisions kept with --history-max 3: %s", got)
	}

	code, out, errOut = runConvoy(t, "history", "api", "-C", dir, "--kubeconfig", kc, "--max", "2")
	rows := regexp.MustCompile(`(?m)^\d+\s`).FindAllString(out, -1)
	if code != 0 || len(rows) != 2 || !strings.HasPrefix(rows[0], "5") || !strings.Contains(out, "back to three") {
		t.Fatalf("history --max 2: exit %d\n%s\n%s", code, out, errOut)
	}
	// -o json and yaml are helm history's, field for field.
	helmOut, err := cluster.Helm(t, "history", "api", "-n", ns, "--max", "2", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var want, got []map[string]any
	code, out, errOut = runConvoy(t, "history", "api", "-C", dir, "--kubeconfig", kc, "--max", "2", "-o", "json")
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || json.Unmarshal([]byte(helmOut), &want) != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("history -o json: exit %d\n%s\n%s\nhelm history -o json:\n%s", code, out, errOut, helmOut)
	}
	code, out, errOut = runConvoy(t, "history", "api", "-C", dir, "--kubeconfig", kc, "--max", "1", "-o", "yaml")
	if code != 0 || !strings.HasPrefix(out, "- app_version: \"1.0\"\n  chart: app-0.1.0\n  description: back to three\n  revision: 6\n  rollback_revision: 3\n  status: deployed\n  updated: \"") {
		t.Fatalf("history -o yaml: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runConvoy(t, "history", "api", "-C", dir, "--kubeconfig", kc, "--max", "1", "--show-rollback-revision")
	if code != 0 || !regexp.MustCompile(`(?m)^REVISION +UPDATED +STATUS +CHART +APP VERSION +ROLLBACK +DESCRIPTION\n6 .* deployed +app-0\.1\.0 +1\.0 +3 +back to three\n$`).MatchString(out) {
		t.Fatalf("history --show-rollback-revision: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, bad := range [][]string{
		{"history", "api", "-o", "xml"},
		{"history", "api", "--max", "0"},
		{"rollback", "api", "--wait=maybe"},
		{"rollback", "api", "--history-max", "-2"},
		{"rollback", "api", "--description", strings.Repeat("x", 257)},
	} {
		if code, _, errOut := runConvoy(t, append(bad, "-C", dir, "--kubeconfig", kc)...); code == 0 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q", bad, code, errOut)
		}
	}
	if got := revisions(statusOf(t, ns, "api")); got != "4:failed 5:failed 6:deployed" {
		t.Fatalf("a refused command changed the records: %s", got)
	}
}
