package main

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// apply --stats says what an apply cost: the requests by verb and
// resource (an install writes its record twice: created pending, updated
// deployed), and the time spent writing records and in hooks.
func TestApplyStats(t *testing.T) {
	cluster.Need(t)
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	stack := func(message string, hook bool) string {
		return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "app" {
  chart  = %[1]q
  values = [{ message = %[3]q, preUpgradeHook = %[4]t }]
  wait   = false
}
`, appChart(t), ns, message, hook)
	}
	dir := writeStack(t, stack("one", false))
	stats := func(step string) string {
		t.Helper()
		code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress", "--stats")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", step, code, out, errOut)
		}
		line := regexp.MustCompile(`(?m)^stats: .*$`).FindString(errOut)
		if line == "" {
			t.Fatalf("%s: no stats line in\n%s", step, errOut)
		}
		return line
	}
	count := func(line, kind string) int {
		t.Helper()
		m := regexp.MustCompile(` ` + regexp.QuoteMeta(kind) + `=(\d+)`).FindStringSubmatch(line)
		if m == nil {
			return 0
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	duration := func(line, name string) time.Duration {
		t.Helper()
		m := regexp.MustCompile(` ` + name + `=(\S+)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("no %s in %s", name, line)
		}
		d, err := time.ParseDuration(m[1])
		if err != nil {
			t.Fatalf("%s in %s: %v", name, line, err)
		}
		return d
	}

	line := stats("install")
	if got := count(line, "create secrets"); got != 1 {
		t.Errorf("install: create secrets=%d, want 1 (the pending record)\n%s", got, line)
	}
	if got := count(line, "update secrets"); got != 1 {
		t.Errorf("install: update secrets=%d, want 1 (the record deployed)\n%s", got, line)
	}
	if count(line, "patch deployments") < 1 {
		t.Errorf("install: no apply of the Deployment counted\n%s", line)
	}
	if duration(line, "records") <= 0 {
		t.Errorf("install: no time writing records\n%s", line)
	}
	if d := duration(line, "hooks"); d != 0 {
		t.Errorf("install: %s in hooks, but the chart has no install hooks\n%s", d, line)
	}
	duration(line, "rate-limit-wait")

	// An upgrade with a pre-upgrade hook Job: time in hooks, and the
	// previous record superseded too.
	dir = writeStack(t, stack("two", true))
	line = stats("upgrade")
	if duration(line, "hooks") <= 0 {
		t.Errorf("upgrade: no time in hooks\n%s", line)
	}
	if count(line, "create jobs")+count(line, "patch jobs") < 1 {
		t.Errorf("upgrade: the hook Job's creation not counted\n%s", line)
	}
	if got := count(line, "update secrets"); got != 2 {
		t.Errorf("upgrade: update secrets=%d, want 2 (revision 2 deployed, 1 superseded)\n%s", got, line)
	}
}
