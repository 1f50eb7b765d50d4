package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	if !strings.Contains(line, " rate-limited=") {
		t.Errorf("install: no rate-limited count\n%s", line)
	}
	if d := duration(line, "rate-limit-wait"); d != 0 || count(line, "rate-limited") != 0 {
		t.Errorf("install: %s held back by the rate limiters, but a release makes a dozen requests against a burst of 1,000\n%s", d, line)
	}

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

// A first install of a small release costs near the floor (--stats counts
// are deterministic): objects the plan listed as absent are neither read
// for the ownership check nor before their apply, the records are listed
// by the plan only, and an object in a namespace create_namespace is
// about to create is dry-run once per validation (a create in the
// validation namespace), not first refused in its own. Per object: a
// plan's dry run, the apply's validation, the apply — at most 3 requests,
// no GET (before: 2 GETs and up to 5 dry runs and applies).
func TestFirstInstallRequests(t *testing.T) {
	cluster.Need(t)
	existing := cluster.Namespace(t)
	fresh := existing + "-new"
	t.Cleanup(func() {
		_ = cluster.Client().CoreV1().Namespaces().Delete(context.Background(), fresh, metav1.DeleteOptions{})
	})
	scaffold, err := filepath.Abs(filepath.Join("..", "..", "internal", "chart", "testdata", "charts", "scaffold"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, stack, namespace string }{
		{"existing namespace", "existing", existing},
		{"namespace created by the release", "fresh", fresh},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeStack(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[3]q
}
release "app" {
  chart            = %[1]q
  namespace        = %[3]q
  create_namespace = true
  wait             = false
}
`, scaffold, tc.stack, tc.namespace))
			code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", cluster.Kubeconfig(), "--auto-approve", "--no-progress", "--stats")
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			line := regexp.MustCompile(`(?m)^stats: .*$`).FindString(errOut)
			count := func(kind string) int {
				m := regexp.MustCompile(` ` + regexp.QuoteMeta(kind) + `=(\d+)`).FindStringSubmatch(line)
				if m == nil {
					return 0
				}
				n, _ := strconv.Atoi(m[1])
				return n
			}
			for _, res := range []string{"deployments", "services", "serviceaccounts"} {
				if got := count("get " + res); got != 0 {
					t.Errorf("get %s=%d, want 0: the plan's list found the object absent\n%s", res, got, line)
				}
				// The apply's validation is the plan's dry run, made by
				// the same client a moment before: not sent again.
				if got := count("patch "+res) + count("create "+res); got != 2 {
					t.Errorf("patch+create %s=%d, want 2 (the plan's dry run, the apply)\n%s", res, got, line)
				}
				if count("patch "+res) < 1 {
					t.Errorf("%s not applied\n%s", res, line)
				}
			}
			// The plan's lists of records (this namespace's, the stack's
			// on the cluster, ...); the apply's own two (its history,
			// its pruning) are gone.
			if got := count("list secrets"); got > 3 {
				t.Errorf("list secrets=%d, want at most 3 (the plan's lists of records)\n%s", got, line)
			}
			if got := count("create secrets") + count("update secrets"); got != 2 {
				t.Errorf("record writes=%d, want 2 (pending, then deployed)\n%s", got, line)
			}
			// The namespace is read once; a new one is validated (a dry
			// run) and created, each once.
			if got := count("get namespaces"); got != 1 {
				t.Errorf("get namespaces=%d, want 1\n%s", got, line)
			}
			wantCreates := 0
			if tc.namespace == fresh {
				wantCreates = 2
			}
			if got := count("create namespaces"); got != wantCreates {
				t.Errorf("create namespaces=%d, want %d\n%s", got, wantCreates, line)
			}
			if _, err := cluster.Client().AppsV1().Deployments(tc.namespace).Get(context.Background(), "app-scaffold", metav1.GetOptions{}); err != nil {
				t.Errorf("the Deployment was not created: %v", err)
			}
		})
	}
}
