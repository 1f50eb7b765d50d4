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
	"github.com/convoy-sh/convoy/internal/cluster/release"
	"github.com/convoy-sh/convoy/internal/controller"
	"github.com/convoy-sh/convoy/internal/controller/stack"
	"github.com/convoy-sh/convoy/internal/devcluster/devtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// recordsOf lists the release records of name in ns, oldest first is not
// promised: the count and labels are what the tests read.
func recordsOf(t *testing.T, c client.Client, ns, name string) []corev1.Secret {
	t.Helper()
	var l corev1.SecretList
	if err := c.List(context.Background(), &l, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": name}); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// A release helm installed is not taken over by a Stack that names it:
// the Stack is Ready=False saying "adopt: installed by helm, not by a
// stack", and nothing is applied, until its release block says
// adopt = true.
func TestControllerTakesOverHelmReleaseOnlyWithAdopt(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	chart := filepath.Join(t.TempDir(), "app")
	appChart(t, chart)
	if out, err := cluster.Helm(t, "install", "ops-app", chart, "-n", ns); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	stackHCL := func(extra string) string {
		dir := filepath.Join(t.TempDir(), "stack")
		appChart(t, filepath.Join(dir, "charts", "app"))
		hcl := fmt.Sprintf(`stack "ops" {
  default_namespace = %q
}
release "ops" {
  name   = "ops-app"
  chart  = "./charts/app"
  values = [{ message = "from-the-stack" }]
  %s
}
`, ns, extra)
		if err := os.WriteFile(filepath.Join(dir, "stack.hcl"), []byte(hcl), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	src := "oci://" + reg.Host + "/stacks/app@" + push(t, reg, stackHCL(""), "v1")
	create(t, c, newStack(ns, "ops", src, nil))
	startController(t, ns, nil)

	st := waitStack(t, c, ns, "ops", 60*time.Second, "refused", isCond("Ready", metav1.ConditionFalse, v1alpha1.ReasonInvalid))
	if msg := cond(st, "Ready").Message; !strings.Contains(msg, "adopt: installed by helm, not by a stack") || !strings.Contains(msg, "adopt = true") {
		t.Errorf("Ready: %q", msg)
	}
	waitReconciles(t, c, ns, 2, "ops")
	if n := len(recordsOf(t, c, ns, "ops-app")); n != 1 {
		t.Errorf("%d records of ops-app, want helm's 1: the Stack applied", n)
	}
	if got := configMessage(t, c, ns, "ops-app"); got != "hello" {
		t.Errorf("ops-app's message %q: the Stack applied", got)
	}

	update(t, c, ns, "ops", func(st *v1alpha1.Stack) {
		st.Spec.Source = "oci://" + reg.Host + "/stacks/app@" + push(t, reg, stackHCL("adopt = true"), "v2")
	})
	waitStack(t, c, ns, "ops", 90*time.Second, "applied", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if got := configMessage(t, c, ns, "ops-app"); got != "from-the-stack" {
		t.Errorf("ops-app's message %q after adopt = true", got)
	}
	for _, r := range recordsOf(t, c, ns, "ops-app") {
		if r.Labels["status"] == "deployed" && (r.Labels[release.StackLabel] != "ops" || r.Labels[release.StackNamespaceLabel] != ns) {
			t.Errorf("the deployed record's labels %v", r.Labels)
		}
	}
}

// A Stack of another namespace never takes over what a Stack wrote,
// though its stack has the same name and clusters: while that Stack
// exists it waits as a duplicate; once that Stack was deleted without
// prune (its releases let go), it is Ready=False naming the other Stack's
// namespace, and nothing of its own is applied. A Stack of another
// namespace with a stack of its own name is refused the same way.
func TestControllerNeverTakesOverAnotherNamespacesStack(t *testing.T) {
	first, second := cluster.Namespace(t), cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	// One stack (its name and namespaces are first's), two builds.
	srcA := "oci://" + reg.Host + "/stacks/app@" + push(t, reg, stackDir(t, first, "a", ""), "a")
	srcB := "oci://" + reg.Host + "/stacks/app@" + push(t, reg, stackDir(t, first, "b", ""), "b")
	// One controller for both namespaces, of a shard of this test's own.
	shard := "takeover-" + first[len(first)-6:]
	inShard := func(st *v1alpha1.Stack) { st.Labels = map[string]string{v1alpha1.ShardLabel: shard} }
	t.Cleanup(func() { dropFinalizers(t, second) }) // once the controller stopped
	create(t, c, newStack(first, "web", srcA, inShard))
	startController(t, first, func(o *controller.Options) { o.Namespace, o.Shard = "", shard })
	waitStack(t, c, first, "web", 90*time.Second, "applied", isCond("Ready", metav1.ConditionTrue, "Applied"))
	for _, r := range recordsOf(t, c, first, "api") {
		if r.Labels[release.StackNamespaceLabel] != first {
			t.Fatalf("a record of api does not name the Stack's namespace: %v", r.Labels)
		}
	}

	// Stacks are ordered by creationTimestamp, which has seconds, then by
	// namespace: the second Stack is created in a later second.
	if d := time.Until(getStack(t, c, first, "web").CreationTimestamp.Add(1100 * time.Millisecond)); d > 0 {
		time.Sleep(d)
	}
	create(t, c, newStack(second, "web", srcB, inShard))
	waitStack(t, c, second, "web", 60*time.Second, "DuplicateStack", isCond("Stalled", metav1.ConditionTrue, stack.ReasonDuplicateStack))

	// The first Stack goes without prune: its releases are let go.
	if err := c.Delete(context.Background(), getStack(t, c, first, "web")); err != nil {
		t.Fatal(err)
	}
	var l v1alpha1.StackList
	devtest.Eventually(t, 60*time.Second, func() bool {
		if err := c.List(context.Background(), &l, client.InNamespace(first)); err != nil {
			t.Fatal(err)
		}
		return len(l.Items) == 0
	}, func() string { return "the first Stack is not gone:" + describe(&l.Items[0]) })
	for _, r := range recordsOf(t, c, first, "api") {
		if r.Labels[release.StackLabel] != "" || r.Labels[release.LetGoLabel] != first {
			t.Fatalf("a record of api not let go: %v", r.Labels)
		}
	}
	st := waitStack(t, c, second, "web", 60*time.Second, "refused as let go", func(st *v1alpha1.Stack) bool {
		c := cond(st, "Ready")
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "adopt: let go by stack "+first+"/"+first)
	})
	if msg := cond(st, "Ready").Message; !strings.Contains(msg, "a Stack of namespace "+second+" never takes over") {
		t.Errorf("Ready: %q", msg)
	}
	waitReconciles(t, c, second, 2, "web")
	for _, name := range []string{"api", "web"} {
		if got := configMessage(t, c, first, name); got != name+"-hello-a" {
			t.Errorf("%s's message %q: the second Stack applied", name, got)
		}
		if n := len(recordsOf(t, c, first, name)); n != 1 {
			t.Errorf("%d records of %s, want 1", n, name)
		}
	}
}
