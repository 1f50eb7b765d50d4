package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/convoy-sh/convoy/internal/cluster/release"
)

func testedStack(t *testing.T, ns string) string {
	chart, err := filepath.Abs(filepath.Join("testdata", "charts", "tested"))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "good" {
  chart  = %[1]q
  labels = { tier = "front" }
}
release "bad" {
  chart  = %[1]q
  values = [{ failTest = true }]
  labels = { tier = "back" }
}
`, chart, ns)
}

func testRuns(t *testing.T, ns, name string) map[string]release.HookPhase {
	t.Helper()
	h := statusOf(t, ns, name)
	out := map[string]release.HookPhase{}
	for _, hk := range h[len(h)-1].Hooks {
		out[hk.Name] = hk.LastRun.Phase
	}
	return out
}

// convoy test runs the charts' test hooks as helm test: a passing release,
// a failing one with its failed pod's logs, the runs recorded; and convoy
// output shows the releases' outputs.
func TestTestHooksAndOutputs(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, testedStack(t, ns))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}

	code, out, errOut := runConvoy(t, "test", "release.good", "-C", dir, "--kubeconfig", kc)
	if code != 0 || !strings.Contains(out, "good-test-connection  Succeeded") {
		t.Fatalf("test of a passing release: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := testRuns(t, ns, "good"); got["good-test-connection"] != release.HookPhaseSucceeded {
		t.Fatalf("recorded test runs of good: %v", got)
	}

	// What the failing test pod's container logged, as the devcluster's
	// kubelet serves it; the passing tests' pods log something else.
	cluster.PodLog(t, ns, "bad-test-fail", "checking bad:80", "wget: can't connect to remote host: Connection refused")
	cluster.NamespaceLog(t, ns, "connected to the service")
	code, out, errOut = runConvoy(t, "test", "-C", dir, "--kubeconfig", kc, "--kube-context", "")
	for _, want := range []string{
		"bad-test-connection   Succeeded",
		"bad-test-fail         Failed",
		"release.bad (" + ns + "/bad): test hook tested/templates/test-fail.yaml: v1 Pod " + ns + "/bad-test-fail: failed: pod failed; pod bad-test-fail: container check: terminated: Error (exit code 1)",
		"Logs of pod bad-test-fail, container check:\n  checking bad:80\n  wget: can't connect to remote host: Connection refused\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("test output lacks %q", want)
		}
	}
	if strings.Contains(out, "connected to the service") {
		t.Errorf("without --logs, the logs of passing tests' pods are printed")
	}
	if code != 1 || t.Failed() {
		t.Fatalf("test of a failing release: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := testRuns(t, ns, "bad"); got["bad-test-fail"] != release.HookPhaseFailed || got["bad-test-connection"] != release.HookPhaseSucceeded {
		t.Fatalf("recorded test runs of bad: %v", got)
	}

	code, out, errOut = runConvoy(t, "output", "-C", dir, "--kubeconfig", kc, "--json")
	var doc map[string]struct {
		Revision  int
		Status    string
		Resources []string
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("output --json: exit %d\n%s\n%s", code, out, errOut)
	}
	if g := doc["release.good"]; g.Revision != 1 || g.Status != "deployed" || strings.Join(g.Resources, ",") != "v1/ConfigMap/good-config" || len(doc) != 2 {
		t.Fatalf("output --json: %s", out)
	}
	code, out, _ = runConvoy(t, "output", "bad", "-C", dir, "--kubeconfig", kc)
	if code != 0 || out != "release.bad ("+ns+"/bad)\n  revision  = 1\n  status    = \"deployed\"\n  resources = {\n    \"v1/ConfigMap/bad-config\"\n  }\n" {
		t.Fatalf("output bad: exit %d\n%s", code, out)
	}
}

func TestCompletion(t *testing.T) {
	dir := writeStack(t, testedStack(t, "x"))
	code, out, _ := runConvoy(t, "__complete", "output", "-C", dir, "release.g")
	if code != 0 || !strings.HasPrefix(out, "release.good\n:4\n") {
		t.Fatalf("release completion: exit %d\n%s", code, out)
	}
	code, out, _ = runConvoy(t, "__complete", "plan", "-C", dir, "--target", "release.")
	if code != 0 || !strings.HasPrefix(out, "release.bad\nrelease.good\n:4\n") {
		t.Fatalf("--target completion: exit %d\n%s", code, out)
	}
	code, out, _ = runConvoy(t, "__complete", "apply", "")
	if code != 0 || !strings.HasPrefix(out, "cvp\n:8\n") {
		t.Fatalf("plan file completion: exit %d\n%s", code, out)
	}

	// --env completes the stack's environment blocks, on every command
	// that has it, even when a variable has no value yet.
	envs := writeStack(t, testedStack(t, "x")+`
variable "region" {}
environment "staging" {
  vars = { region = "eu" }
}
environment "prod" {}
environment "preview" {}
`)
	for _, args := range [][]string{
		{"plan", "-C", envs, "--env", "p"},
		{"test", "-C", envs, "-l", "tier=web", "--env", "p"},
		{"status", "-C", envs, "--env=p"},
	} {
		code, out, _ = runConvoy(t, append([]string{"__complete"}, args...)...)
		if code != 0 || !strings.HasPrefix(out, "preview\nprod\n:4\n") {
			t.Errorf("--env completion of %v: exit %d\n%s", args, code, out)
		}
	}
	code, out, _ = runConvoy(t, "__complete", "apply", "-C", envs, "--env", "")
	if code != 0 || !strings.HasPrefix(out, "preview\nprod\nstaging\n:4\n") {
		t.Errorf("--env completion of every environment: exit %d\n%s", code, out)
	}
	code, out, _ = runConvoy(t, "__complete", "plan", "-C", dir, "--env", "")
	if code != 0 || !strings.HasPrefix(out, ":4\n") {
		t.Errorf("--env completion without environments: exit %d\n%s", code, out)
	}
}

// convoy test --filter chooses tests by name as helm test --filter does,
// and --logs prints the logs of every test's pods (a Job's too), not only
// of a failed test's.
func TestTestFilterAndLogs(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	dir := writeStack(t, testedStack(t, ns))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	cluster.PodLog(t, ns, "bad-test-fail", "checking bad:80", "wget: bad address")
	cluster.NamespaceLog(t, ns, "connected to the service")

	code, out, errOut := runConvoy(t, "test", "release.bad", "-C", dir, "--kubeconfig", kc, "--filter", "!name=bad-test-fail", "--logs")
	logs := regexp.MustCompile(`Logs of pod bad-test-connection-\w+, container check:\n  connected to the service\n`)
	if code != 0 || !regexp.MustCompile(`bad-test-fail +skipped \(--filter\)`).MatchString(out) || !logs.MatchString(out) || strings.Contains(out, "wget") {
		t.Fatalf("test --filter !name=bad-test-fail --logs: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := testRuns(t, ns, "bad"); got["bad-test-fail"] != "" || got["bad-test-connection"] != release.HookPhaseSucceeded {
		t.Fatalf("recorded test runs of bad: %v", got)
	}

	code, out, errOut = runConvoy(t, "test", "-C", dir, "--kubeconfig", kc, "--filter", "name=bad-test-fail,name=good-test-connection")
	for _, want := range []string{
		`(?m)^good +` + ns + ` +good-test-connection +Succeeded `,
		`(?m)^bad +` + ns + ` +bad-test-fail +Failed `,
		`(?m)^bad +` + ns + ` +bad-test-connection +skipped \(--filter\) `,
		`Logs of pod bad-test-fail, container check:\n  checking bad:80\n  wget: bad address\n`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("test --filter name=...,name=... lacks %s", want)
		}
	}
	if code != 1 || strings.Contains(out, "connected to the service") || t.Failed() {
		t.Fatalf("test --filter name=bad-test-fail,name=good-test-connection: exit %d\n%s\n%s", code, out, errOut)
	}

	code, out, errOut = runConvoy(t, "test", "-C", dir, "--kubeconfig", kc, "-l", "tier=front")
	if code != 0 || !regexp.MustCompile(`(?m)^good +`+ns+` +good-test-connection +Succeeded `).MatchString(out) || strings.Contains(out, "bad") {
		t.Fatalf("test -l tier=front: exit %d\n%s\n%s", code, out, errOut)
	}

	for _, f := range []string{"size=big", "name=", "bad-test-fail"} {
		if code, _, errOut := runConvoy(t, "test", "-C", dir, "--kubeconfig", kc, "--filter", f); code == 0 || !strings.Contains(errOut, "--filter") {
			t.Errorf("--filter %q: exit %d, stderr %q", f, code, errOut)
		}
	}
}

// convoy test over a chart in helm create's shape, whose test hook is a
// bare Pod with restartPolicy Never: the devcluster runs it to its end as
// a kubelet would (issue 55, item 12: it ran forever and convoy test
// hung), and one the kubelet fails fails the test.
func TestTestBarePodHook(t *testing.T) {
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	chart, err := filepath.Abs(filepath.Join("testdata", "charts", "scaffolded"))
	if err != nil {
		t.Fatal(err)
	}
	dir := writeStack(t, fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "web" {
  chart   = %[1]q
  timeout = "60s"
  values  = [{ test = { readyAfter = "1s" } }]
}
release "broken" {
  chart   = %[1]q
  timeout = "60s"
  values  = [{ test = { failing = true } }]
}
`, chart, ns))
	if code, out, errOut := runConvoy(t, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress"); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runConvoy(t, "test", "release.web", "-C", dir, "--kubeconfig", kc)
	if code != 0 || !regexp.MustCompile(`web-scaffolded-test-connection\s+Succeeded`).MatchString(out) {
		t.Fatalf("test of the scaffolded chart: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := testRuns(t, ns, "web"); got["web-scaffolded-test-connection"] != release.HookPhaseSucceeded {
		t.Fatalf("recorded test runs of web: %v", got)
	}
	code, out, errOut = runConvoy(t, "test", "release.broken", "-C", dir, "--kubeconfig", kc)
	if code != 1 || !regexp.MustCompile(`broken-scaffolded-test-connection\s+Failed`).MatchString(out) {
		t.Fatalf("test of the failing scaffolded chart: exit %d\n%s\n%s", code, out, errOut)
	}
}
