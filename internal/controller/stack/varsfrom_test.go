package stack_test

import (
	"context"
	"testing"
	"time"

	"github.com/convoy-sh/convoy/api/v1alpha1"
	"github.com/convoy-sh/convoy/internal/chart/source/sourcetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A changed varsFrom ConfigMap or Secret is a changed input: planned (and
// here applied) at once, not at the next interval.
func TestVarsFromChangePlansAtOnce(t *testing.T) {
	ns := cluster.Namespace(t)
	c := kube(t)
	reg := sourcetest.StartRegistry(t, "", "")
	push(t, reg, stackDir(t, ns, "v1", ""), "v1")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "vars", Namespace: ns}, Data: map[string]string{"message": "one"}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "secrets", Namespace: ns}, Data: map[string][]byte{"token": []byte("t1")}}
	create(t, c, cm)
	create(t, c, sec)
	create(t, c, newStack(ns, "shop", "oci://"+reg.Host+"/stacks/app:v1", func(st *v1alpha1.Stack) {
		st.Spec.Interval = &metav1.Duration{Duration: time.Hour}
		st.Spec.VarsFrom = []v1alpha1.VarsFrom{{Kind: "ConfigMap", Name: "vars"}, {Kind: "Secret", Name: "secrets"}}
	}))
	startController(t, ns, nil)
	waitStack(t, c, ns, "shop", 60*time.Second, "Ready", func(st *v1alpha1.Stack) bool {
		return revisionsOf(st) == "api:1:deployed web:1:deployed"
	})

	cm.Data["message"] = "two"
	if err := c.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	waitStack(t, c, ns, "shop", 30*time.Second, "upgraded after the ConfigMap changed", func(st *v1alpha1.Stack) bool {
		return revisionsOf(st) == "api:2:deployed web:2:deployed"
	})
	if m := configMessage(t, c, ns, "web"); m != "web-two-v1" {
		t.Fatalf("web message %q", m)
	}
	sec.Data["token"] = []byte("t2")
	if err := c.Update(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
	waitStack(t, c, ns, "shop", 30*time.Second, "upgraded after the Secret changed", func(st *v1alpha1.Stack) bool {
		return revisionsOf(st) == "api:3:deployed web:2:deployed"
	})
}
