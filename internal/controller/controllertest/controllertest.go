// Package controllertest holds what the integration tests of the
// controller's packages share: the devcluster (Cluster, set up by Main
// in each package's TestMain), a controller run in-process for a test's
// namespace (StartController), the app chart and stack they push, and
// waits on Stacks' status. Tests only import it.
package controllertest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/internal/controller/ctl"
	"github.com/convoy-sh/convoy/internal/testfiles"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

var Cluster = devtest.New()

// Main is the TestMain of a package whose tests run controllers against
// the devcluster: the test binary is a controller process when EnvChild
// is set (the leader election tests), else the tests run against
// Cluster.
func Main(m *testing.M) int {
	ctrllog.SetLogger(logr.Discard())
	if spec := os.Getenv(EnvChild); spec != "" {
		return runChild(spec)
	}
	return Cluster.Run(m)
}

// EnvChild makes the test binary a controller process with these options
// (JSON): the leader election tests kill it with SIGKILL.
const EnvChild = "CONVOY_TEST_CONTROLLER"

func runChild(spec string) int {
	var o controller.Options
	if err := json.Unmarshal([]byte(spec), &o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	o.Logger = logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, nil))
	ctrllog.SetLogger(o.Logger)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := controller.Run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

var installOnce sync.Once

// MinInterval is the --min-interval of the tests' controllers and
// the minimum of their CRD: Stacks here are planned seconds apart.
const MinInterval = time.Second

// Kube is a client of Stacks and the built-in types, with the CRD
// installed.
func Kube(t *testing.T) client.Client {
	t.Helper()
	c, err := ctl.NewClient(Cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	var ierr error
	installOnce.Do(func() {
		ierr = ctl.Install(context.Background(), c, ctl.InstallRequest{MinInterval: MinInterval})
	})
	if ierr != nil {
		t.Fatal(ierr)
	}
	return c
}

// StartController runs a controller in-process for the test's namespace
// until the test ends, or until stop, which returns once it stopped.
func StartController(t *testing.T, ns string, mod func(*controller.Options)) (stop func()) {
	t.Helper()
	o := controller.Options{
		Kubeconfig: Cluster.Kubeconfig(), Namespace: ns, CacheDir: t.TempDir(),
		MetricsAddress: "0", HealthAddress: "0", LeaderElectionNamespace: ns,
		Logger: logr.Discard(), MinInterval: MinInterval,
	}
	if mod != nil {
		mod(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- controller.Run(ctx, o) }()
	var once sync.Once
	stop = func() { once.Do(func() { StopController(t, ns, cancel, done) }) }
	t.Cleanup(stop)
	return stop
}

// StopController stops a controller startController ran and waits for
// it to end.
func StopController(t *testing.T, ns string, cancel func(), done <-chan error) {
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("controller: %v", err)
		}
	case <-time.After(30 * time.Second):
		// What is still running says why.
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Errorf("the controller did not stop within 30s; goroutines:\n%s", stacks.String())
	}
	DropFinalizers(t, ns)
}

// DropFinalizers lets the Stacks left in ns go once their controller has
// stopped, so that the namespace's deletion does not wait for them.
func DropFinalizers(t *testing.T, ns string) {
	t.Helper()
	c := Kube(t)
	ctx := context.Background()
	var l v1alpha1.StackList
	if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
		t.Logf("list Stacks: %v", err)
		return
	}
	for i := range l.Items {
		st := &l.Items[i]
		before := st.DeepCopy()
		st.Finalizers = nil
		if err := c.Patch(ctx, st, client.MergeFrom(before)); err != nil {
			t.Logf("Stack %s/%s: drop finalizers: %v", ns, st.Name, err)
		}
	}
}

// AppChart writes a small chart (a ConfigMap and a Deployment) into dir.
func AppChart(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: app\nversion: 0.1.0\n",
		"values.yaml": "replicas: 1\nmessage: hello\n",
		"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  message: {{ .Values.message | quote }}
`,
		"templates/deployment.yaml": testfiles.AppDeployment,
	}
	testfiles.Write(t, dir, files)
}

// StackDir writes a stack of two releases of the app chart, in namespace
// ns, whose messages read var.message and a suffix.
func StackDir(t *testing.T, ns, suffix string, extra string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	AppChart(t, filepath.Join(dir, "charts", "app"))
	hcl := fmt.Sprintf(`
stack %[1]q {
  default_namespace = %[1]q
}
variable "message" {
  default = "hello"
}
variable "token" {
  default   = "none"
}
release "api" {
  chart  = "./charts/app"
  values = [{ message = "api-${var.message}-%[2]s", extra = var.token }]
  wait   = true
  %[3]s
}
release "web" {
  chart      = "./charts/app"
  depends_on = [release.api]
  values     = [{ message = "web-${var.message}-%[2]s" }]
}
`, ns, suffix, extra)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Push pushes the stack in dir to reg as stacks/app:tag and returns its
// digest.
func Push(t *testing.T, reg *sourcetest.Registry, dir, tag string) string {
	t.Helper()
	p, err := artifact.Push(context.Background(), artifact.Registry{}, dir, "oci://"+reg.Host+"/stacks/app:"+tag)
	if err != nil {
		t.Fatal(err)
	}
	return p.Digest
}

// NewStack is a Stack of src planned every 2s, changed by mod.
func NewStack(ns, name, src string, mod func(*v1alpha1.Stack)) *v1alpha1.Stack {
	st := &v1alpha1.Stack{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       v1alpha1.StackSpec{Source: src, Interval: &metav1.Duration{Duration: 2 * time.Second}},
	}
	if mod != nil {
		mod(st)
	}
	return st
}

// Create creates obj or fails t.
func Create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

// GetStack reads a Stack or fails t.
func GetStack(t *testing.T, c client.Client, ns, name string) *v1alpha1.Stack {
	t.Helper()
	var st v1alpha1.Stack
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

// Update changes a Stack's spec, retrying on conflicts.
func Update(t *testing.T, c client.Client, ns, name string, mod func(*v1alpha1.Stack)) {
	t.Helper()
	for range 10 {
		st := GetStack(t, c, ns, name)
		mod(st)
		err := c.Update(context.Background(), st)
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "modified") {
			t.Fatal(err)
		}
	}
	t.Fatal("could not update the Stack")
}

// Cond is the Stack's condition typ (nil: none).
func Cond(st *v1alpha1.Stack, typ string) *metav1.Condition {
	return meta.FindStatusCondition(st.Status.Conditions, typ)
}

// Describe is the Stack's status as a test's failure shows it.
func Describe(st *v1alpha1.Stack) string {
	var b strings.Builder
	for _, c := range st.Status.Conditions {
		fmt.Fprintf(&b, "\n  %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	if p := st.Status.Plan; p != nil {
		fmt.Fprintf(&b, "\n  plan %s %q applied=%s", p.Digest, p.Summary, st.Status.LastAppliedPlan)
	}
	fmt.Fprintf(&b, "\n  releases %+v lastError %q", st.Status.Releases, st.Status.LastError)
	return b.String()
}

// WaitStack waits until ok holds for the Stack.
func WaitStack(t *testing.T, c client.Client, ns, name string, timeout time.Duration, what string, ok func(*v1alpha1.Stack) bool) *v1alpha1.Stack {
	t.Helper()
	var st *v1alpha1.Stack
	devtest.Eventually(t, timeout, func() bool {
		st = GetStack(t, c, ns, name)
		return ok(st)
	}, func() string {
		return fmt.Sprintf("Stack %s/%s: not %s after %s:%s", ns, name, what, timeout, Describe(st))
	})
	return st
}

// WaitReconciles waits until the controller has reconciled each of the
// named Stacks n more times, counted from the call: so that a test can
// assert that nothing happened after some moment only once the
// controller has looked again, however slow the machine. A reconcile
// that computes a plan, or checks that a plan waiting for approval still
// holds, moves status.plan.createdAt (a time to the second; a Stack's
// reconciles are interval apart, and these Stacks' intervals are 2s): each
// move is one reconcile ended. The first move may end a reconcile that
// began before the call; the second is a reconcile begun after it (one
// Stack is never reconciled twice at once), so n should be 2 at least. A
// reconcile that finds nothing due writes nothing and is not counted: it
// plans and applies nothing either.
func WaitReconciles(t *testing.T, c client.Client, ns string, n int, names ...string) {
	t.Helper()
	const timeout = 90 * time.Second
	last, moves := map[string]time.Time{}, map[string]int{}
	createdAt := func(st *v1alpha1.Stack) time.Time {
		if st.Status.Plan == nil || st.Status.Plan.CreatedAt == nil {
			return time.Time{}
		}
		return st.Status.Plan.CreatedAt.Time
	}
	for _, name := range names {
		last[name] = createdAt(GetStack(t, c, ns, name))
	}
	start := time.Now()
	var behind string // the first Stack not reconciled n times yet
	devtest.Eventually(t, timeout, func() bool {
		behind = ""
		for _, name := range names {
			st := GetStack(t, c, ns, name)
			if at := createdAt(st); at.After(last[name]) {
				last[name] = at
				moves[name]++
			}
			if moves[name] < n && behind == "" {
				behind = fmt.Sprintf("Stack %s/%s: reconciled %d times in %s, not %d:%s", ns, name, moves[name], timeout, n, Describe(st))
			}
		}
		return behind == ""
	}, func() string { return behind })
	t.Logf("Stacks %s reconciled %d times in %s", strings.Join(names, ", "), n, time.Since(start).Round(100*time.Millisecond))
}

// IsCond holds when the Stack has condition typ with status (and reason,
// unless "") for its generation.
func IsCond(typ string, status metav1.ConditionStatus, reason string) func(*v1alpha1.Stack) bool {
	return func(st *v1alpha1.Stack) bool {
		c := Cond(st, typ)
		return c != nil && c.Status == status && (reason == "" || c.Reason == reason) && c.ObservedGeneration == st.Generation
	}
}

// RevisionsOf lists the Stack's releases as name:revision:status.
func RevisionsOf(st *v1alpha1.Stack) string {
	var s []string
	for _, r := range st.Status.Releases {
		s = append(s, fmt.Sprintf("%s:%d:%s", r.Name, r.Revision, r.Status))
	}
	return strings.Join(s, " ")
}

// ConfigMessage is the message of the app chart's ConfigMap of release
// name (the error in parentheses when it cannot be read).
func ConfigMessage(t *testing.T, c client.Client, ns, name string) string {
	t.Helper()
	var cm corev1.ConfigMap
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name + "-config"}, &cm); err != nil {
		return "(" + err.Error() + ")"
	}
	return cm.Data["message"]
}

// Replicas are the replicas of Deployment ns/name.
func Replicas(t *testing.T, c client.Client, ns, name string) int32 {
	t.Helper()
	var d appsv1.Deployment
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &d); err != nil {
		t.Fatal(err)
	}
	return *d.Spec.Replicas
}

// Scale changes a Deployment's replicas as kubectl scale does.
func Scale(t *testing.T, ns, name string, n int32) {
	t.Helper()
	ctx := context.Background()
	deps := Cluster.Client().AppsV1().Deployments(ns)
	s, err := deps.GetScale(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Spec.Replicas = n
	if _, err := deps.UpdateScale(ctx, name, s, metav1.UpdateOptions{FieldManager: "kubectl"}); err != nil {
		t.Fatal(err)
	}
}
