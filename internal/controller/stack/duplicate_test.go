package stack_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	"github.com/convoy-sh/convoy/internal/controller"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Two Stacks of one stack (same source and vars: same stack, environment
// and clusters): the second never plans or applies, and says which Stack
// reconciles the stack; it takes over once the first is deleted.
func TestDuplicateStackNeverApplies(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	src := "oci://" + reg.Host + "/stacks/app:v1"
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	create(t, c, newStack(ns, "first", src, func(st *v1alpha1.Stack) { st.Spec.Prune = true }))
	create(t, c, newStack(ns, "second", src, nil))
	startController(t, ns, nil)

	waitStack(t, c, ns, "first", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	st := waitStack(t, c, ns, "second", 60*time.Second, "DuplicateStack", isCond("Stalled", metav1.ConditionTrue, "DuplicateStack"))
	if msg := cond(st, "Stalled").Message; !strings.Contains(msg, ns+"/first") {
		t.Errorf("the duplicate does not name the first Stack: %s", msg)
	}
	// Both looked again, a few times: still one revision, and the second
	// never planned.
	waitReconciles(t, c, ns, 3, "first")
	st = getStack(t, c, ns, "second")
	if r := cond(st, "Ready"); r.Status != metav1.ConditionFalse || r.Reason != "DuplicateStack" || st.Status.Plan != nil || st.Status.LastAppliedPlan != "" {
		t.Fatalf("the duplicate planned or is Ready:%s", describe(st))
	}
	for _, r := range helmRecords(t, ns) {
		if r.Labels["version"] != "1" {
			t.Errorf("release %s has revision %s: the duplicate applied", r.Labels["name"], r.Labels["version"])
		}
	}

	// The first goes (and uninstalls its releases): the second takes over.
	deleteStack(t, c, ns, "first")
	waitGone(t, c, ns, "first", time.Minute)
	st = waitStack(t, c, ns, "second", 60*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	if cond(st, "Stalled") != nil {
		t.Errorf("still stalled:%s", describe(st))
	}
}

// billingStack is the two-release stack of StackDir in namespace ns, named
// stack "billing" whoever deploys it.
func billingStack(t *testing.T, ns string) string {
	t.Helper()
	dir := stackDir(t, ns, "v1", "")
	path := filepath.Join(dir, "stack.hcl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hcl := strings.Replace(string(b), fmt.Sprintf("stack %q {", ns), `stack "billing" {`, 1)
	if hcl == string(b) {
		t.Fatal("StackDir's stack block changed: the test cannot rename it")
	}
	if err := os.WriteFile(path, []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Under --tenancy strict a Stack's identity includes its namespace: team
// A's Stack whose artifact says stack "billing" does not block team B's
// own billing Stack (no DuplicateStack, nothing of team A named), and
// both apply their own releases. Two Stacks of one namespace with one
// stack are still one identity: the younger waits, naming only the older
// Stack of its own namespace.
func TestStrictStackIdentityIncludesNamespace(t *testing.T) {
	cluster.Need(t)
	c := kube(t)
	teamA, teamB := team(t, c), team(t, c)
	// After the controller stops (cleanups run last first): team B's
	// Stacks are not in the namespace StartController cleans up.
	t.Cleanup(func() { dropFinalizers(t, teamB) })
	shard := teamA
	inShard := func(st *v1alpha1.Stack) { st.Labels = map[string]string{v1alpha1.ShardLabel: shard} }
	regA, regB := sourcetest.StartRegistry(t, "", ""), sourcetest.StartRegistry(t, "", "")
	push(t, regA, billingStack(t, teamA), "v1")
	push(t, regB, billingStack(t, teamB), "v1")
	create(t, c, newStack(teamA, "squat", "oci://"+regA.Host+"/stacks/app:v1", inShard))
	startController(t, teamA, func(o *controller.Options) {
		o.Namespace, o.Shard = "", shard
		o.Tenancy, o.DefaultServiceAccount = controller.TenancyStrict, "deployer"
	})
	a := waitStack(t, c, teamA, "squat", 90*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, "Applied"))
	create(t, c, newStack(teamB, "billing", "oci://"+regB.Host+"/stacks/app:v1", inShard))
	b := waitStack(t, c, teamB, "billing", 90*time.Second, "Ready or stalled", func(st *v1alpha1.Stack) bool {
		return isCond("Ready", metav1.ConditionTrue, "Applied")(st) || isCond("Stalled", metav1.ConditionTrue, "")(st)
	})
	if !isCond("Ready", metav1.ConditionTrue, "Applied")(b) {
		t.Fatalf("team B's billing Stack did not apply:%s", describe(b))
	}
	if d := describe(b); strings.Contains(d, teamA) || strings.Contains(d, "squat") {
		t.Errorf("team B's Stack names team A's namespace or Stack:%s", d)
	}
	if a.Status.Identity == b.Status.Identity {
		t.Errorf("both Stacks have identity %s", a.Status.Identity)
	}
	if revisionsOf(b) != "api:1:deployed web:1:deployed" {
		t.Errorf("team B's revisions: %s", revisionsOf(b))
	}
	// Team A's Stack is planned again, and still owns only its releases.
	waitReconciles(t, c, teamA, 2, "squat")
	if a := getStack(t, c, teamA, "squat"); revisionsOf(a) != "api:1:deployed web:1:deployed" || !isCond("Ready", metav1.ConditionTrue, "")(a) {
		t.Errorf("team A's Stack after team B's applied:%s", describe(a))
	}

	// A second Stack of team B with the same stack is a real duplicate.
	create(t, c, newStack(teamB, "billing-copy", "oci://"+regB.Host+"/stacks/app:v1", inShard))
	dup := waitStack(t, c, teamB, "billing-copy", 60*time.Second, "DuplicateStack", isCond("Stalled", metav1.ConditionTrue, "DuplicateStack"))
	msg := cond(dup, "Stalled").Message
	if !strings.Contains(msg, teamB+"/billing") || strings.Contains(msg, teamA) {
		t.Errorf("the duplicate should name %s/billing and nothing of %s: %s", teamB, teamA, msg)
	}
}
