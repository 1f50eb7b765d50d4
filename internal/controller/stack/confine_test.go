package stack_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/controller/stack"
	"github.com/convoy-sh/convoy/internal/run"
	"github.com/convoy-sh/convoy/internal/stack/artifact"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// confinedStack writes a stack of one release of the app chart whose
// message is the expression msg.
func confinedStack(t *testing.T, ns, msg string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "stack")
	appChart(t, filepath.Join(dir, "charts", "app"))
	hcl := fmt.Sprintf(`stack %[1]q {
  default_namespace = %[1]q
}
release "api" {
  chart  = "./charts/app"
  values = [{ message = %[2]s }]
}
`, ns, msg)
	if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// secretLine is the longest line of a file: what must never show.
func secretLine(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	long := ""
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); len(l) > len(long) {
			long = l
		}
	}
	if i := strings.LastIndex(long, ": "); i > 0 {
		long = long[i+2:]
	}
	return long
}

// In the controller, a stack reads only the files of its pulled artifact:
// a Stack whose values read the controller's own kubeconfig by its
// absolute path, or a file beside the stack directory (../), stalls
// naming the expression at its file:line:col, nothing is applied, and
// the kubeconfig's content shows nowhere (status, events, the plan). The
// CLI reads the same stack's file as before.
func TestControllerConfinesFiles(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	kc := cluster.Kubeconfig()
	secret := secretLine(t, kc)
	abs := confinedStack(t, ns, fmt.Sprintf("base64encode(file(%q))", kc))
	outside := confinedStack(t, ns, `file("../outside.txt")`)
	if err := os.WriteFile(filepath.Join(filepath.Dir(outside), "outside.txt"), []byte("beside"), 0o644); err != nil {
		t.Fatal(err)
	}
	create(t, c, newStack(ns, "abs", "oci://"+reg.Host+"/stacks/app@"+push(t, reg, abs, "abs"), nil))
	create(t, c, newStack(ns, "outside", "oci://"+reg.Host+"/stacks/app@"+push(t, reg, outside, "outside"), nil))
	startController(t, ns, nil)

	// The message names the file and line, and underlines the argument
	// (its column) under the line as written.
	for name, want := range map[string][]string{
		"abs":     {`on stack.hcl line 6, in release "api":`, fmt.Sprintf(`file(%q)`, kc), "is an absolute path: the controller reads only the files of the pulled stack artifact"},
		"outside": {`on stack.hcl line 6, in release "api":`, `file("../outside.txt")`, "../outside.txt is outside the stack directory"},
	} {
		st := waitStack(t, c, ns, name, 60*time.Second, "Stalled", isCond("Stalled", metav1.ConditionTrue, v1alpha1.ReasonInvalid))
		msg := strings.Join(strings.Fields(st.Status.LastError), " ")
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("Stack %s: lastError %q lacks %q", name, st.Status.LastError, w)
			}
		}
		if !strings.Contains(st.Status.LastError, "^^^") {
			t.Errorf("Stack %s: lastError %q does not underline the argument", name, st.Status.LastError)
		}
		if s := describe(st); strings.Contains(s, secret) {
			t.Errorf("Stack %s shows the kubeconfig's content:%s", name, s)
		}
	}
	var events corev1.EventList
	if err := c.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if strings.Contains(e.Message, secret) {
			t.Errorf("event %s shows the kubeconfig's content", e.Name)
		}
	}
	var cms corev1.ConfigMapList
	if err := c.List(context.Background(), &cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		for k, v := range cm.Data {
			if strings.Contains(v, secret) {
				t.Errorf("ConfigMap %s/%s key %s holds the kubeconfig's content", ns, cm.Name, k)
			}
		}
	}
	if got := configMessage(t, c, ns, "api"); !strings.HasPrefix(got, "(") {
		t.Errorf("ConfigMap api-config was applied: %q", got)
	}
	var secrets corev1.SecretList
	if err := c.List(context.Background(), &secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"}); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) > 0 {
		t.Errorf("%d release records were written", len(secrets.Items))
	}

	// The CLI keeps reading what the stack names.
	ls, err := runLoad(context.Background(), run.Source{Dir: abs})
	if err != nil {
		t.Fatalf("the CLI: %v", err)
	}
	if len(ls.Stack.Releases) != 1 {
		t.Fatalf("the CLI: %d releases", len(ls.Stack.Releases))
	}
}

// The CRD refuses an interval below the minimum (0s included); the
// controller clamps what a Stack stored before asks for to its
// --min-interval and says so in the Warning condition.
func TestIntervalMinimum(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	for _, d := range []time.Duration{0, time.Millisecond, 500 * time.Millisecond} {
		st := newStack(ns, "fast", "oci://example.invalid/stacks/app:v1", func(st *v1alpha1.Stack) {
			st.Spec.Interval = &metav1.Duration{Duration: d}
		})
		err := c.Create(context.Background(), st)
		if err == nil || !strings.Contains(err.Error(), "interval is shorter than the minimum of 1s") {
			t.Errorf("interval %s: got %v, want the CRD's refusal", d, err)
		}
	}
	reg := sourcetest.StartRegistry(t, "", "")
	src := "oci://" + reg.Host + "/stacks/app@" + push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "shop", src, nil)) // 2s
	startController(t, ns, func(o *controller.Options) { o.MinInterval = time.Hour })
	st := waitStack(t, c, ns, "shop", 60*time.Second, "IntervalClamped", isCond(stack.CondWarning, metav1.ConditionTrue, stack.ReasonIntervalClamped))
	if msg := cond(st, stack.CondWarning).Message; !strings.Contains(msg, "spec.interval 2s is shorter than the controller's --min-interval: planned every 1h0m0s") {
		t.Errorf("Warning: %q", msg)
	}
}

// A sensitive variable given in spec.vars is a Warning naming varsFrom
// with a Secret; given in a Secret, none.
func TestSensitiveVarsWarning(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	dir := confinedStack(t, ns, "var.password")
	if err := os.WriteFile(filepath.Join(dir, "vars.hcl"), []byte("variable \"password\" {\n  sensitive = true\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "oci://" + reg.Host + "/stacks/app@" + push(t, reg, dir, "v1")
	create(t, c, newStack(ns, "plain", src, func(st *v1alpha1.Stack) { st.Spec.Vars = map[string]string{"password": "hunter2-in-plain"} }))
	startController(t, ns, nil)
	st := waitStack(t, c, ns, "plain", 60*time.Second, "SensitiveVars", isCond(stack.CondWarning, metav1.ConditionTrue, stack.ReasonSensitiveVars))
	msg := cond(st, stack.CondWarning).Message
	if !strings.Contains(msg, "variable password is declared sensitive") || !strings.Contains(msg, "spec.varsFrom from a Secret") {
		t.Errorf("Warning: %q", msg)
	}
	if strings.Contains(msg, "hunter2") {
		t.Errorf("Warning shows the value: %q", msg)
	}
	// Moved to a Secret: the warning goes.
	create(t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pw", Namespace: ns}, StringData: map[string]string{"password": "hunter2-in-plain"}})
	update(t, c, ns, "plain", func(st *v1alpha1.Stack) {
		st.Spec.Vars = nil
		st.Spec.VarsFrom = []v1alpha1.VarsFrom{{Kind: "Secret", Name: "pw"}}
	})
	waitStack(t, c, ns, "plain", 60*time.Second, "without a Warning", func(st *v1alpha1.Stack) bool {
		return cond(st, stack.CondWarning) == nil && st.Status.ObservedGeneration == st.Generation
	})
}

// The cache of pulled stacks is shared, but a digest pulled with one
// Stack's registry credentials is not served to a Stack without them:
// not in the same controller, nor in another namespace's controller
// sharing the cache directory. With the credentials, it is.
func TestCacheServesOnlyWhoMayPull(t *testing.T) {
	ns, other := cluster.Namespace(t), cluster.Namespace(t)
	c := kube(t)
	const user, pass = "team-a", "s3cret-pa55word"
	reg := sourcetest.StartRegistry(t, user, pass)
	dir := stackDir(t, ns, "v1", "")
	p, err := artifact.Push(context.Background(), artifact.Registry{Username: user, Password: pass}, dir, "oci://"+reg.Host+"/stacks/app:v1")
	if err != nil {
		t.Fatal(err)
	}
	src := "oci://" + reg.Host + "/stacks/app@" + p.Digest
	cache := t.TempDir()
	create(t, c, dockerSecret(ns, "pull", reg.Host, user, pass))
	create(t, c, newStack(ns, "owner", src, func(st *v1alpha1.Stack) {
		st.Spec.SourceSecretRef = &v1alpha1.LocalObjectReference{Name: "pull"}
	}))
	startController(t, ns, func(o *controller.Options) { o.CacheDir = cache })
	waitStack(t, c, ns, "owner", 90*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if _, err := os.Stat(filepath.Join(cache, "stacks", strings.ReplaceAll(p.Digest, ":", "-"))); err != nil {
		t.Fatalf("the digest is not in the cache: %v", err)
	}

	// The same controller, a Stack without the credentials.
	create(t, c, newStack(ns, "freeloader", src, nil))
	st := waitStack(t, c, ns, "freeloader", 60*time.Second, "SourceFailed", isCond("Ready", metav1.ConditionFalse, v1alpha1.ReasonSourceFailed))
	if !strings.Contains(st.Status.LastError, "set spec.sourceSecretRef") {
		t.Errorf("lastError %q", st.Status.LastError)
	}
	// Another namespace's controller on the same cache.
	create(t, c, newStack(other, "freeloader", src, nil))
	startController(t, other, func(o *controller.Options) { o.CacheDir = cache })
	st = waitStack(t, c, other, "freeloader", 60*time.Second, "SourceFailed", isCond("Ready", metav1.ConditionFalse, v1alpha1.ReasonSourceFailed))
	if !strings.Contains(st.Status.LastError, "set spec.sourceSecretRef") {
		t.Errorf("lastError %q", st.Status.LastError)
	}
	if st.Status.Source != nil {
		t.Errorf("status.source %+v: the artifact was served", st.Status.Source)
	}
	// With its own Secret of the same credentials, that namespace pulls it.
	create(t, c, dockerSecret(other, "pull", reg.Host, user, pass))
	update(t, c, other, "freeloader", func(st *v1alpha1.Stack) {
		st.Spec.SourceSecretRef = &v1alpha1.LocalObjectReference{Name: "pull"}
	})
	waitStack(t, c, other, "freeloader", 60*time.Second, "pulled", func(st *v1alpha1.Stack) bool {
		return st.Status.Source != nil && st.Status.Source.Digest == p.Digest
	})
}
