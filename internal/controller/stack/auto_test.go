package stack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A pushed stack and a Stack object: the controller plans, applies, and
// reports Ready with revisions; a new push to the tag is an upgrade.
func TestAutoApplyThenUpgradeOnNewPush(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	d1 := push(t, reg, stackDir(t, ns, "v1", ""), "live")
	create(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "vars", Namespace: ns}, Data: map[string]string{"message": "from-cm", "unrelated": "x"}})
	create(t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "secrets", Namespace: ns}, StringData: map[string]string{"token": "s3cr3t-t0ken"}})
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:live", func(st *v1alpha1.Stack) {
		st.Spec.VarsFrom = []v1alpha1.VarsFrom{{Kind: "ConfigMap", Name: "vars"}, {Kind: "Secret", Name: "secrets"}}
	}))
	startController(t, ns, nil)

	st := waitStack(t, c, ns, "shop", 90*time.Second, "Ready", isCond("Ready", metav1.ConditionTrue, ""))
	if got := revisionsOf(st); got != "api:1:deployed web:1:deployed" {
		t.Fatalf("revisions %q%s", got, describe(st))
	}
	if st.Status.Source == nil || st.Status.Source.Digest != d1 {
		t.Fatalf("source %+v, pushed %s", st.Status.Source, d1)
	}
	if m := configMessage(t, c, ns, "api"); m != "api-from-cm-v1" {
		t.Fatalf("api message %q", m)
	}
	// The plan's text is in the ConfigMap the status names.
	var cm corev1.ConfigMap
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: st.Status.Plan.ConfigMapRef.Name}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["digest"] != st.Status.Plan.Digest || !strings.Contains(cm.Data["plan.txt"], "install") || !strings.Contains(cm.Data["plan.md"], "api") {
		t.Fatalf("plan ConfigMap %v", cm.Data)
	}
	// A value from a Secret is sensitive: masked in the plan's text.
	if strings.Contains(cm.Data["plan.txt"]+cm.Data["plan.md"], "s3cr3t-t0ken") || !strings.Contains(cm.Data["plan.txt"], "extra: (sensitive)") {
		t.Fatalf("the plan text shows the Secret's value, or not the token at all:\n%s", cm.Data["plan.txt"])
	}

	d2 := push(t, reg, stackDir(t, ns, "v2", ""), "live")
	if d2 == d1 {
		t.Fatal("a changed stack pushed with the same digest")
	}
	st = waitStack(t, c, ns, "shop", 90*time.Second, "upgraded", func(st *v1alpha1.Stack) bool {
		return revisionsOf(st) == "api:2:deployed web:2:deployed" && isCond("Ready", metav1.ConditionTrue, "")(st)
	})
	if st.Status.Source.Digest != d2 {
		t.Fatalf("source %+v after the new push %s", st.Status.Source, d2)
	}
	if m := configMessage(t, c, ns, "web"); m != "web-from-cm-v2" {
		t.Fatalf("web message %q", m)
	}
	// Nothing changes any more: the next plans are clean, no revision is
	// added.
	waitReconciles(t, c, ns, 2, "shop")
	st = getStack(t, c, ns, "shop")
	if revisionsOf(st) != "api:2:deployed web:2:deployed" || st.Status.Plan.HasChanges {
		t.Fatalf("after settling:%s", describe(st))
	}
}
