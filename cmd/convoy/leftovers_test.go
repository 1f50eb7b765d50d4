package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/convoy-sh/convoy/internal/testfiles"
)

// countedChart is a chart of .Values.count ConfigMaps, cm-0, cm-1, …
func countedChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "counted")
	testfiles.Write(t, dir, map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: counted\nversion: 0.1.0\n",
		"values.yaml": "count: 4\n",
		"templates/configmaps.yaml": `{{- range $i := until (int .Values.count) }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{{ $i }}
{{- end }}
`,
	})
	return dir
}

func countedStack(chart, ns string, count int, atomic bool) string {
	return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "counted" {
  chart  = %[1]q
  values = [{ count = %[3]d }]
  atomic = %[4]t
}
`, chart, ns, count, atomic)
}

// A failed upgrade (without atomic) that created a ConfigMap before the
// quota refused the next one leaves it; the next plan, back at 4
// ConfigMaps, deletes it as left over by the failed revision, and the
// apply removes it (issue 43, item 2).
func TestLeftoverOfAFailedRevisionIsPlannedAsADelete(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	chart := countedChart(t)
	dir := writeStack(t, countedStack(chart, ns, 4, false))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("first apply: %d\n%s\n%s", code, out, errOut)
	}
	cluster.LimitConfigMaps(t, ns, 5)
	rewrite := func(count int) {
		if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(countedStack(chart, ns, count, false)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(6)
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 1 {
		t.Fatalf("apply past the quota: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := revisions(statusOf(t, ns, "counted")); got != "1:deployed 2:failed" {
		t.Fatalf("history %s", got)
	}
	left := cluster.HelmConfigMaps(t, ns)
	if left != "cm-0 cm-1 cm-2 cm-3 cm-4" && left != "cm-0 cm-1 cm-2 cm-3 cm-5" {
		t.Fatalf("after the failed upgrade: %s", left)
	}
	extra := left[len(left)-4:]

	rewrite(4)
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode")
	if code != 2 {
		t.Fatalf("plan after the failed upgrade: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		`- v1 ConfigMap ` + ns + `/` + extra + ` \(left over by failed revision 2\)`,
		`leftover: 1 object left over by failed revision 2`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("plan lacks %s:\n%s", want, out)
		}
	}
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	if got := cluster.HelmConfigMaps(t, ns); got != "cm-0 cm-1 cm-2 cm-3" {
		t.Errorf("after the apply: %s", got)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Errorf("plan after the apply: exit %d\n%s\n%s", code, out, errOut)
	}
}

// A release with atomic = true whose upgrade fails is rolled back: the
// results table says so (not "deployed"), the exit code is 1, the
// ConfigMap the failed upgrade created is gone, and the next plan, back
// at the restored count, has nothing to do (issue 43, items 2 and 3).
func TestAtomicReleaseRolledBackSaysSoAndLeavesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	chart := countedChart(t)
	dir := writeStack(t, countedStack(chart, ns, 4, true))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("first apply: %d\n%s\n%s", code, out, errOut)
	}
	cluster.LimitConfigMaps(t, ns, 5)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(countedStack(chart, ns, 6, true)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve")
	if code != 1 {
		t.Fatalf("atomic apply past the quota: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if want := `(?m)^counted\s+` + ns + `\s+upgrade\s+3\s+rolled back\s`; !regexp.MustCompile(want).MatchString(out) {
		t.Errorf("results lack %s:\n%s", want, out)
	}
	if got := revisions(statusOf(t, ns, "counted")); got != "1:superseded 2:failed 3:deployed" {
		t.Errorf("history %s", got)
	}
	if got := cluster.HelmConfigMaps(t, ns); got != "cm-0 cm-1 cm-2 cm-3" {
		t.Errorf("after the atomic rollback: %s", got)
	}
	// Back at 4 ConfigMaps, what the rollback restored: nothing to do.
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(countedStack(chart, ns, 4, true)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Errorf("plan at 4 ConfigMaps after the rollback: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
}

// The restore of an atomic stack rolls back a release whose upgrade failed
// (without atomic of its own), and deletes what that upgrade created.
func TestStackRestoreDeletesWhatTheFailedUpgradeCreated(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	chart := countedChart(t)
	dir := writeStack(t, countedStack(chart, ns, 4, false))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("first apply: %d\n%s\n%s", code, out, errOut)
	}
	cluster.LimitConfigMaps(t, ns, 5)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(countedStack(chart, ns, 6, false)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--atomic")
	if code != 1 {
		t.Fatalf("atomic apply past the quota: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if want := `(?m)^counted\s.*restored`; !regexp.MustCompile(want).MatchString(out) {
		t.Errorf("results lack %s:\n%s", want, out)
	}
	if got := revisions(statusOf(t, ns, "counted")); got != "1:superseded 2:failed 3:deployed" {
		t.Errorf("history %s", got)
	}
	if got := cluster.HelmConfigMaps(t, ns); got != "cm-0 cm-1 cm-2 cm-3" {
		t.Errorf("after the stack's restore: %s", got)
	}
}
