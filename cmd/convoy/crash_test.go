package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/testfiles"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/devcluster"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// buildConvoy builds the convoy binary into a temporary directory, for
// tests that must kill it or close its pipes.
func buildConvoy(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "convoy")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// slowChart is a chart whose pods become ready only readyAfter after they
// start (devcluster's ready-after annotation), so that a run spends most
// of its time waiting.
func slowChart(t *testing.T, readyAfter string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "slow")
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: slow\nversion: 0.1.0\n",
		"values.yaml": fmt.Sprintf("message: hello\nreadyAfter: %q\n", readyAfter),
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  message: {{ .Values.message | quote }}
`,
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: 1
  selector:
    matchLabels:
      app: {{ .Release.Name }}
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}
      annotations:
        ` + devcluster.AnnotationReadyAfter + `: {{ .Values.readyAfter | quote }}
        message: {{ .Values.message | quote }}
    spec:
      containers:
        - name: web
          image: "nginx:1.27"
`,
	}
	testfiles.Write(t, dir, files)
	return dir
}

// runBin runs the convoy binary to its end.
func runBin(bin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return code, out.String(), errb.String()
}

// killState is what a killed run left behind.
type killState struct {
	after   time.Duration
	lease   bool
	pending int
}

// TestSIGKILLedAppliesHealOnTheNextApply kills `convoy apply` of a stack of
// 10 releases at random points, 20 times. Each time the next `convoy apply
// --auto-approve` must run at once, without force-unlock or recover, and
// converge: plan --detailed-exitcode exits 0, histories have no gaps and no
// pending record, and helm list and helm history agree with them.
func TestSIGKILLedAppliesHealOnTheNextApply(t *testing.T) {
	cluster.Need(t)
	helm := devtest.HelmBinary(t)
	const trials, releases = 20, 10
	start := time.Now()
	bin := buildConvoy(t)
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	chart := slowChart(t, "2s")
	dir := writeStack(t, "")
	write := func(message string) {
		hcl := fmt.Sprintf(`
stack %[2]q {
  default_namespace = %[2]q
}
release "r" {
  count       = %[4]d
  chart       = %[1]q
  values      = [{ message = %[3]q, readyAfter = "${300 * (count.index %% 4 + 1)}ms" }]
  history_max = 0
  timeout     = "60s"
}
`, chart, ns, message, releases)
		if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	applyArgs := []string{"apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress", "--parallelism", strconv.Itoa(releases)}
	eng, err := release.NewEngine(context.Background(), cluster.RESTConfig(), release.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leases := cluster.Client().CoordinationV1().Leases(stacklock.Namespace)

	write("install")
	if code, out, errOut := runBin(bin, applyArgs...); code != 0 {
		t.Fatalf("install: %d\n%s\n%s", code, out, errOut)
	}
	write("upgrade")
	t0 := time.Now()
	if code, out, errOut := runBin(bin, applyArgs...); code != 0 {
		t.Fatalf("upgrade: %d\n%s\n%s", code, out, errOut)
	}
	full := time.Since(t0)
	// Kills land anywhere from before the lock is taken to after the
	// run ended.
	window := full * 5 / 4
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("build, install and upgrade: %s; an upgrade of the %d releases takes %s; seed %d", time.Since(start).Round(time.Millisecond), releases, full.Round(time.Millisecond), seed)

	var states []killState
	converged := 0
	var recoveries []time.Duration
	for i := 1; i <= trials; i++ {
		write(fmt.Sprintf("trial-%d", i))
		var out, errb bytes.Buffer
		cmd := exec.Command(bin, applyArgs...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		after := time.Duration(rng.Int64N(int64(window)))
		time.Sleep(after)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()

		st := killState{after: after}
		// A lease the dead run held; a run that took the lock over and
		// finished leaves it released (no holder), as a record of whom it
		// took it from.
		lease, err := leases.Get(context.Background(), stacklock.Name(ns), metav1.GetOptions{})
		st.lease = err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != ""
		hs, err := eng.Histories(context.Background(), ns)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			if h[len(h)-1].Info.Status.IsPending() {
				st.pending++
			}
		}
		states = append(states, st)

		t1 := time.Now()
		code, rout, rerr := runBin(bin, applyArgs...)
		recoveries = append(recoveries, time.Since(t1))
		switch {
		case code != 0 || strings.Contains(rerr, "is locked"):
			t.Errorf("trial %d (killed after %s, lease %v, %d pending): the next apply exited %d\n%s\n%s", i, after, st.lease, st.pending, code, rout, rerr)
			continue
		case st.lease && !strings.Contains(rerr, "took over the lock"):
			t.Errorf("trial %d: the dead run's lock was taken over silently:\n%s", i, rerr)
		case strings.Count(rerr, "interrupted run") < st.pending:
			t.Errorf("trial %d: %d records left pending, not all announced:\n%s", i, st.pending, rerr)
		}
		if ok := checkConverged(t, i, bin, helm, dir, ns, kc, eng, releases); ok {
			converged++
		}
	}
	t.Logf("%d/%d trials converged without force-unlock or recover", converged, trials)
	var lease, pending, clean, recovered int
	var points []string
	for _, s := range states {
		switch {
		case s.pending > 0:
			pending++
		case s.lease:
			lease++
		default:
			clean++
		}
		points = append(points, fmt.Sprintf("%.1fs:%s%d", s.after.Seconds(), map[bool]string{true: "L", false: "-"}[s.lease], s.pending))
		recovered += s.pending
	}
	slices.Sort(recoveries)
	t.Logf("kills left: %d the lock and pending records (%d records in all, each marked failed by the next apply), %d the lock only, %d nothing; kill points (time:lock,pending): %s",
		pending, recovered, lease, clean, strings.Join(points, " "))
	t.Logf("next apply: median %s, max %s; whole test %s", recoveries[len(recoveries)/2].Round(time.Millisecond), recoveries[len(recoveries)-1].Round(time.Millisecond), time.Since(start).Round(time.Second))

	// Every revision, as helm reads it, agrees with the records.
	for n := range releases {
		name := fmt.Sprintf("r-%d", n)
		h, err := eng.Storage(ns).History(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		var helmHist []struct {
			Revision int    `json:"revision"`
			Status   string `json:"status"`
		}
		if err := helmJSON(helm, kc, &helmHist, "history", name, "-n", ns, "--max", "1000", "-o", "json"); err != nil {
			t.Fatal(err)
		}
		if len(helmHist) != len(h) {
			t.Fatalf("%s: helm history has %d revisions, the records %d", name, len(helmHist), len(h))
		}
		for j, r := range h {
			if helmHist[j].Revision != r.Version || helmHist[j].Status != string(r.Info.Status) {
				t.Errorf("%s: helm history %+v, record %d:%s", name, helmHist[j], r.Version, r.Info.Status)
			}
		}
	}
}

// checkConverged checks one trial's end: nothing left to do, every
// history without gaps or pending records ending deployed, and helm list
// showing the same revisions.
func checkConverged(t *testing.T, trial int, bin, helm, dir, ns, kc string, eng *release.Engine, releases int) bool {
	t.Helper()
	ok := true
	if code, out, errOut := runBin(bin, "plan", "-C", dir, "--kubeconfig", kc, "--detailed-exitcode"); code != 0 {
		t.Errorf("trial %d: plan --detailed-exitcode exited %d\n%s\n%s", trial, code, out, errOut)
		ok = false
	}
	hs, err := eng.Histories(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]int{}
	for name, h := range hs {
		for j, r := range h {
			if r.Version != j+1 || r.Info.Status.IsPending() {
				t.Errorf("trial %d: %s history has a gap or a pending record: %s", trial, name, revisions(h))
				ok = false
				break
			}
		}
		if h[len(h)-1].Info.Status != release.StatusDeployed {
			t.Errorf("trial %d: %s ends %s", trial, name, revisions(h))
			ok = false
		}
		last[name] = h[len(h)-1].Version
	}
	var list []struct {
		Name     string `json:"name"`
		Revision string `json:"revision"`
		Status   string `json:"status"`
	}
	if err := helmJSON(helm, kc, &list, "list", "-n", ns, "-o", "json"); err != nil {
		t.Fatal(err)
	}
	if len(list) != releases || len(last) != releases {
		t.Errorf("trial %d: helm list shows %d releases, the records %d", trial, len(list), len(last))
		ok = false
	}
	for _, r := range list {
		if r.Revision != strconv.Itoa(last[r.Name]) || r.Status != "deployed" {
			t.Errorf("trial %d: helm list shows %s at revision %s %s; the records end at %d", trial, r.Name, r.Revision, r.Status, last[r.Name])
			ok = false
		}
	}
	return ok
}

func helmJSON(helm, kc string, v any, args ...string) error {
	cmd := exec.Command(helm, append(args, "--kubeconfig", kc)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return json.Unmarshal(out, v)
}

// TestClosedOutputPipeDoesNotKillTheRun: `convoy apply 2>&1 | reader`, and
// the reader goes away mid-apply (Ctrl-C in a pipeline ends it first). The
// run is not killed by SIGPIPE: it finishes, or, interrupted too, cancels
// cleanly; either way the records say what happened and the lock is
// released.
func TestClosedOutputPipeDoesNotKillTheRun(t *testing.T) {
	cluster.Need(t) // before building convoy
	bin := buildConvoy(t)
	ns := cluster.Namespace(t)
	kc := cluster.Kubeconfig()
	chart := slowChart(t, "3s")
	for i, interrupt := range []bool{false, true} {
		name := fmt.Sprintf("web-%d", i)
		dir := writeStack(t, fmt.Sprintf("stack %[2]q {\n  default_namespace = %[2]q\n}\nrelease %[3]q {\n  chart = %[1]q\n}\n", chart, ns, name))
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "apply", "-C", dir, "--kubeconfig", kc, "--auto-approve", "--no-progress")
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		// Read until the run waits for its release, then close the pipe.
		var seen bytes.Buffer
		buf := make([]byte, 4096)
		for !strings.Contains(seen.String(), "waiting for") {
			n, err := r.Read(buf)
			if err != nil {
				t.Fatalf("the run ended before waiting: %v\n%s", err, seen.String())
			}
			seen.Write(buf[:n])
		}
		r.Close()
		if interrupt {
			time.Sleep(500 * time.Millisecond)
			_ = cmd.Process.Signal(os.Interrupt)
		}
		_ = cmd.Wait()
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			t.Fatalf("interrupt=%v: convoy was killed by %v with the pipe closed", interrupt, ws.Signal())
		}
		h := statusOf(t, ns, name)
		switch {
		case !interrupt && (ws.ExitStatus() != 0 || revisions(h) != "1:deployed"):
			t.Errorf("the run did not finish: exit %d, %s", ws.ExitStatus(), revisions(h))
		case interrupt && (ws.ExitStatus() != 1 || revisions(h) != "1:failed" || !strings.Contains(h[0].Info.Description, "interrupted")):
			t.Errorf("the interrupted run did not cancel cleanly: exit %d, %s", ws.ExitStatus(), revisions(h))
		}
		if _, err := cluster.Client().CoordinationV1().Leases(stacklock.Namespace).Get(context.Background(), stacklock.Name(ns), metav1.GetOptions{}); err == nil {
			t.Errorf("interrupt=%v: the lock outlived the run", interrupt)
		}
	}
}
