package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/convoy-sh/convoy/internal/run/stacklock"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/run/apply"
	"github.com/convoy-sh/convoy/internal/testfiles"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// fenceStack writes a stack (named after namespace ns, so every dir it
// is written to is the same stack and takes the same lock) of releases
// web-0 and web-1, whose Deployment's pods are never ready when stuck,
// and, with gate, a stuck release "gate" after them.
func fenceStack(t *testing.T, ns, gen string, stuck, gate bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	testfiles.Write(t, filepath.Join(dir, "charts", "web"), map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"values.yaml": "gen: \"0\"\nstuck: false\n",
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}
{{- if .Values.stuck }}
        devcluster.convoy.dev/never-ready: "true"
{{- end }}
      annotations:
        gen: {{ .Values.gen | quote }}
    spec:
      containers:
        - name: web
          image: "nginx:1.27"
`,
	})
	hcl := fmt.Sprintf("stack %q {\n  default_namespace = %q\n}\n", ns, ns)
	for _, name := range []string{"web-0", "web-1"} {
		hcl += fmt.Sprintf(`
release %q {
  chart   = "./charts/web"
  values  = [{ gen = %q, stuck = %t }]
  wait    = true
  timeout = "3m"
}
`, name, gen, stuck)
	}
	if gate {
		hcl += `
release "gate" {
  chart      = "./charts/web"
  depends_on = [release.web-0, release.web-1]
  values     = [{ gen = "gate", stuck = true }]
  wait       = true
  timeout    = "10m"
}
`
	}
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// waitingView tells, once, when every release it names is waiting for its
// objects.
type waitingView struct {
	apply.NoProgress
	mu      sync.Mutex
	want    map[string]bool
	waiting chan struct{}
}

func (v *waitingView) Event(ev release.Event) {
	if ev.Phase != release.PhaseWaiting {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.want[ev.Release] {
		delete(v.want, ev.Release)
		if len(v.want) == 0 {
			close(v.waiting)
		}
	}
}

// historyOf is helm's `history -o json` of a release, as revision:status,
// and each revision's description.
func historyOf(t *testing.T, ns, name string) (string, map[int]string) {
	t.Helper()
	out, err := cluster.Helm(t, "history", name, "-n", ns, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var h []struct {
		Revision    int
		Status      string
		Description string
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("helm history: %v\n%s", err, out)
	}
	var s []string
	descriptions := map[int]string{}
	for _, r := range h {
		s = append(s, strconv.Itoa(r.Revision)+":"+r.Status)
		descriptions[r.Revision] = r.Description
	}
	return strings.Join(s, " "), descriptions
}

// A run whose lock expired while it waited (its renewals stopped, as a
// process stopped with SIGSTOP) and was taken over by another run stops
// before its next write once it goes on: it never overwrites what the
// new holder recorded, and says it lost the lock to whom.
func TestRunThatLostItsLockWritesNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	opts := func(dir string) run.Options {
		return run.Options{Source: run.Source{Dir: dir}, Clusters: run.ClusterOptions{Kubeconfig: cluster.Kubeconfig()}, Grace: 5 * time.Second}
	}
	if res, err := runApply(ctx, opts(fenceStack(t, ns, "0", false, false)), run.ApplyRequest{}); err != nil || res.Failed() {
		t.Fatalf("first apply: %v", err)
	}

	// Run A upgrades both releases to pods that are never ready; its
	// Lease lasts 2s and is not renewed while it waits.
	oa := opts(fenceStack(t, ns, "a", true, false))
	oa.LockTiming = stacklock.Timing{Duration: 2 * time.Second, RenewEvery: time.Hour}
	view := &waitingView{want: map[string]bool{"web-0": true, "web-1": true}, waiting: make(chan struct{})}
	type outcome struct {
		res *run.Applied
		err error
	}
	aDone := make(chan outcome, 1)
	go func() {
		res, err := runApply(ctx, oa, run.ApplyRequest{Progress: func([]apply.Row) apply.Progress { return view }})
		aDone <- outcome{res, err}
	}()
	select {
	case <-view.waiting:
	case a := <-aDone:
		t.Fatalf("run A ended before waiting: %v", a.err)
	}
	aRun := recordRun(t, ns, "web-0", 2)

	// Its Lease expires.
	leases := cluster.Client().CoordinationV1().Leases(stacklock.Namespace)
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := leases.Get(ctx, stacklock.Name(ns), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return time.Since(l.Spec.RenewTime.Time) > time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second+time.Second, nil
	})
	if err != nil {
		t.Fatalf("run A's lock did not expire: %v", err)
	}

	// Run B takes the lock over, marks A's revisions failed, deploys
	// revision 3 of both (their pods ready: A's wait ends too) and then
	// holds the lock, waiting for its gate, until the test is done.
	ob := opts(fenceStack(t, ns, "b", false, true))
	var said []string
	var saidMu sync.Mutex
	ob.Announce = func(s string) { saidMu.Lock(); said = append(said, s); saidMu.Unlock() }
	bctx, stopB := context.WithCancel(ctx)
	defer stopB()
	gateView := &waitingView{want: map[string]bool{"gate": true}, waiting: make(chan struct{})}
	bDone := make(chan outcome, 1)
	go func() {
		res, err := runApply(bctx, ob, run.ApplyRequest{Progress: func([]apply.Row) apply.Progress { return gateView }})
		bDone <- outcome{res, err}
	}()

	// A goes on when its wait ends: it must stop, naming the lock lost.
	var a outcome
	select {
	case a = <-aDone:
	case b := <-bDone:
		t.Fatalf("run B ended first: %v", b.err)
	}
	var lost *stacklock.LostError
	if !errors.As(a.err, &lost) || !errors.Is(a.err, release.ErrNotHeld) {
		t.Fatalf("run A: got %v, want the lock lost", a.err)
	}
	for _, want := range []string{fmt.Sprintf("the lock of stack %q was taken over from run %s by ", ns, aRun), "(convoy apply, run "} {
		if !strings.Contains(fmt.Sprint(a.err), want) {
			t.Errorf("run A's error %q lacks %q", a.err, want)
		}
	}
	if lost == nil || lost.By == nil || lost.By.LockID == aRun {
		t.Errorf("run A's error does not name the new holder: %v", a.err)
	}
	if a.res == nil || !a.res.Failed() {
		t.Errorf("run A's releases are not failed: %+v", a.res)
	}
	<-gateView.waiting
	stopB()
	if b := <-bDone; b.res == nil || len(b.res.Releases) != 3 {
		t.Fatalf("run B: %v", b.err)
	}
	saidMu.Lock()
	announced := strings.Join(said, "\n")
	saidMu.Unlock()
	if !strings.Contains(announced, "took over the lock") || !strings.Contains(announced, "interrupted run "+aRun) {
		t.Errorf("run B announced:\n%s", announced)
	}

	// helm sees one deployed revision per release, B's, and A's revision
	// 2 as B recorded it.
	for _, name := range []string{"web-0", "web-1"} {
		got, descriptions := historyOf(t, ns, name)
		if want := "1:superseded 2:failed 3:deployed"; got != want {
			t.Errorf("helm history %s: %s, want %s", name, got, want)
		}
		if d := descriptions[2]; !strings.HasPrefix(d, "Interrupted run "+aRun+": ") {
			t.Errorf("%s revision 2 says %q, not that run %s was interrupted", name, d, aRun)
		}
	}
}

// recordRun is the run that wrote a release's revision (release.RunLabel).
func recordRun(t *testing.T, ns, name string, revision int) string {
	t.Helper()
	s, err := cluster.Client().CoreV1().Secrets(ns).Get(context.Background(), fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, revision), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Labels[release.RunLabel]
}

// rewriteStack replaces text in a stack's stack.hcl.
func rewriteStack(t *testing.T, dir, old, new string) {
	t.Helper()
	p := filepath.Join(dir, "stack.hcl")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %q", p, old)
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), old, new)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A run whose lock was taken over by a run that has finished by the time
// it goes on names that run as the lock recorded it (run id, user, host,
// pid), not "a run that has finished"; and its results say what the
// records hold now, the other run's revisions.
func TestRunThatLostItsLockNamesTheFinishedHolder(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	opts := func(dir string) run.Options {
		return run.Options{Source: run.Source{Dir: dir}, Clusters: run.ClusterOptions{Kubeconfig: cluster.Kubeconfig()}, Grace: 5 * time.Second}
	}
	if res, err := runApply(ctx, opts(fenceStack(t, ns, "0", false, false)), run.ApplyRequest{}); err != nil || res.Failed() {
		t.Fatalf("first apply: %v", err)
	}

	// Run A upgrades both releases to pods that are never ready and
	// waits 20s for them; its Lease lasts 2s and is not renewed.
	dirA := fenceStack(t, ns, "a", true, false)
	rewriteStack(t, dirA, `timeout = "3m"`, `timeout = "20s"`)
	oa := opts(dirA)
	oa.LockTiming = stacklock.Timing{Duration: 2 * time.Second, RenewEvery: time.Hour}
	view := &waitingView{want: map[string]bool{"web-0": true, "web-1": true}, waiting: make(chan struct{})}
	type outcome struct {
		res *run.Applied
		err error
	}
	aDone := make(chan outcome, 1)
	go func() {
		res, err := runApply(ctx, oa, run.ApplyRequest{Progress: func([]apply.Row) apply.Progress { return view }})
		aDone <- outcome{res, err}
	}()
	select {
	case <-view.waiting:
	case a := <-aDone:
		t.Fatalf("run A ended before waiting: %v", a.err)
	}
	aRun := recordRun(t, ns, "web-0", 2)
	leases := cluster.Client().CoordinationV1().Leases(stacklock.Namespace)
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := leases.Get(ctx, stacklock.Name(ns), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return time.Since(l.Spec.RenewTime.Time) > time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second+time.Second, nil
	})
	if err != nil {
		t.Fatalf("run A's lock did not expire: %v", err)
	}

	// Run B takes the lock over, deploys revision 3 of both without
	// waiting (their pods stay unready: A's wait goes on) and ends.
	dirB := fenceStack(t, ns, "b", true, false)
	rewriteStack(t, dirB, "wait    = true", "wait    = false")
	if res, err := runApply(ctx, opts(dirB), run.ApplyRequest{}); err != nil || res.Failed() {
		t.Fatalf("run B: %v", err)
	}
	bRun := recordRun(t, ns, "web-0", 3)
	select {
	case a := <-aDone:
		t.Fatalf("run A ended before run B did (the test needs it waiting): %v", a.err)
	default:
	}

	a := <-aDone
	var lost *stacklock.LostError
	if !errors.As(a.err, &lost) || lost.By == nil {
		t.Fatalf("run A: got %v, want the lock lost to a named run", a.err)
	}
	host, _ := os.Hostname()
	for _, want := range []string{
		fmt.Sprintf("the lock of stack %q was taken over from run %s by ", ns, aRun),
		fmt.Sprintf("@%s pid %d (convoy apply, run %s)", host, os.Getpid(), bRun),
		"and finished at ",
	} {
		if !strings.Contains(a.err.Error(), want) {
			t.Errorf("run A's error %q lacks %q", a.err, want)
		}
	}
	if a.res == nil || len(a.res.Releases) != 2 {
		t.Fatalf("run A's results: %+v", a.res)
	}
	for _, o := range a.res.Releases {
		if want := "revision 3 deployed, by run " + bRun; o.Now != want {
			t.Errorf("run A's result for %s says now %q (revision %d %s), want %q", o.Name, o.Now, o.Revision, o.Status, want)
		}
	}
	// The lock is free: the next run takes it without a word.
	var said []string
	oc := opts(dirB)
	oc.Announce = func(s string) { said = append(said, s) }
	if res, err := runApply(ctx, oc, run.ApplyRequest{}); err != nil || res.Failed() || len(said) != 0 {
		t.Fatalf("the next run: %v; announced %q", err, said)
	}
}
