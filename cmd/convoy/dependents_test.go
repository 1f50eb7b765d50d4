package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestDependentWithUnchangedOutputsWritesNoRevision is item 6 of issue 37:
// reader reads the name of db's Deployment, which db's values do not
// change. When db's plan leaves the Deployment as it is, the plan says
// reader is a no-op and why; when it changes the Deployment, reader is
// rendered at apply with db's new outputs, renders as deployed and gets
// no revision (helm history has one), and the results say no-op and why.
func TestDependentWithUnchangedOutputsWritesNoRevision(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	stack := func(message string, replicas int) string {
		return fmt.Sprintf(`stack "dep-%[1]s" {
  default_namespace = %[1]q
}
release "db" {
  chart  = %[2]q
  values = [{ message = %[3]q, replicas = %[4]d }]
}
release "reader" {
  chart  = %[2]q
  values = [{ message = "db is ${release.db.resources["apps/v1/Deployment/db"].metadata.name}" }]
}
`, ns, appChart(t), message, replicas)
	}
	dir := writeStack(t, stack("one", 1))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	rewriteStack(t, dir, stack("two", 1))
	// db's Deployment, which reader reads, does not change: the plan
	// knows reader does not either.
	code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc)
	if code != 0 || !strings.Contains(out, "no-op: outputs of release.db read but unchanged") || !strings.Contains(out, "0 to install, 1 to upgrade") {
		t.Errorf("plan: exit %d, want reader planned no-op with the reason\n%s\n%s", code, out, errOut)
	}
	// db's Deployment changes too (not its name): reader is known only at
	// apply, where it renders as deployed.
	rewriteStack(t, dir, stack("two", 2))
	code, out, errOut = runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress")
	if code != 0 {
		t.Fatalf("apply of db's new values: exit %d\n%s\n%s", code, out, errOut)
	}
	var readerRow string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "reader ") {
			readerRow = line
		}
	}
	for _, want := range []string{"no-op", "unchanged (outputs of release.db read but unchanged)"} {
		if !strings.Contains(readerRow, want) {
			t.Errorf("reader's result %q lacks %q\n%s", readerRow, want, out)
		}
	}
	history := func(name string) []int {
		t.Helper()
		hout, err := cluster.Helm(t, "history", name, "-n", ns, "-o", "json")
		if err != nil {
			t.Fatalf("helm history %s: %v", name, err)
		}
		var revs []struct {
			Revision int `json:"revision"`
		}
		if err := json.Unmarshal([]byte(hout), &revs); err != nil {
			t.Fatalf("helm history %s: %v\n%s", name, err, hout)
		}
		var out []int
		for _, r := range revs {
			out = append(out, r.Revision)
		}
		return out
	}
	if got := history("db"); len(got) != 2 {
		t.Errorf("db's history has revisions %v, want 2", got)
	}
	if got := history("reader"); len(got) != 1 {
		t.Errorf("reader's history has revisions %v, want only the first: its rendering did not change", got)
	}
	if code, out, errOut := runConvoy(t, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Errorf("plan after apply: exit %d, want no changes\n%s\n%s", code, out, errOut)
	}
}
